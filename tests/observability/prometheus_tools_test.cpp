// The exposition checked by the real Prometheus tools from Debian's `prometheus` package (2.42):
// `promtool check metrics` lints it, and a real Prometheus server scrapes an exporter built from this
// module and answers queries for its series. Missing tools FAIL these tests: CI and quickstart install them.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "http_client.hpp"
#include "kube_fixture.hpp"
#include "observability/http_server.hpp"

extern char** environ;

namespace kas::obs {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string find_executable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string missing_tool(const std::string& name) {
  return name + " not found on PATH: install Debian's `prometheus` package (apt-get install -y prometheus), "
                "which provides /usr/bin/promtool and /usr/bin/prometheus";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A per-test scratch directory, removed at the end.
struct temp_dir {
  fs::path path;
  explicit temp_dir(const std::string& tag) {
    static int seq = 0;
    path = fs::temp_directory_path() / ("kas_obs_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(seq++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Spawns argv with stdin from `in` (may be empty) and stdout+stderr to `log`.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& in, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!in.empty()) posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// Something to wait for: a count that other threads raise and a flag, behind one condition variable.
struct signals {
  std::mutex mu;
  std::condition_variable cv;
  int scrapes = 0;      // /metrics requests the exporter answered
  bool exited = false;  // the Prometheus process ended
  template <class Pred>
  bool wait_for(std::chrono::seconds timeout, Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, pred);
  }
  template <class F>
  void update(F f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      f();
    }
    cv.notify_all();
  }
};

// A started exporter: the kube fixture registry served on a free loopback port. It counts the
// /metrics requests it answered in `sig`, so a test can wait for scrapes instead of timing them.
struct exporter {
  metrics_registry reg;
  std::unique_ptr<http_server> server;
  explicit exporter(signals* sig = nullptr) {
    testing::populate(reg);
    http_server_config cfg;
    cfg.bind_address = "127.0.0.1:0";
    cfg.collectables = {&reg};
    if (sig)
      cfg.on_request = [sig](const std::string& path, int) {
        if (path == "/metrics") sig->update([&] { ++sig->scrapes; });
      };
    auto s = http_server::start(std::move(cfg));
    if (s.ok()) server = std::move(s.value());
  }
};

TEST(Promtool, CheckMetricsPassesOnTheExposition) {
  std::string promtool = find_executable("promtool");
  ASSERT_FALSE(promtool.empty()) << missing_tool("promtool");
  exporter e;
  ASSERT_TRUE(e.server);
  auto r = testing::http_request("http://127.0.0.1:" + std::to_string(e.server->port()) + "/metrics");
  ASSERT_EQ(r.code, 200) << r.error;

  temp_dir dir("promtool");
  std::ofstream(dir.path / "metrics.txt") << r.body;
  pid_t pid = spawn({promtool, "check", "metrics"}, dir.path / "metrics.txt", dir.path / "out.txt");
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::string out = read_file(dir.path / "out.txt");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool check metrics:\n" << out;
  EXPECT_EQ(out, "") << "promtool reported lint problems";
}

// A real Prometheus server on loopback, killed when this goes out of scope. A reaper thread blocks in
// waitpid and raises `exited`, so both "it died" and "it stopped" are waited for, never polled.
struct prometheus_process {
  explicit prometheus_process(signals& sig) : sig_(sig) {}
  prometheus_process(const prometheus_process&) = delete;
  prometheus_process& operator=(const prometheus_process&) = delete;
  ~prometheus_process() { kill_and_wait(); }

  pid_t pid = -1;
  uint16_t port = 0;
  fs::path log;

  void started(pid_t p) {
    reap();
    pid = p;
    sig_.update([&] { sig_.exited = false; });
    reaper_ = std::thread([this, p] {
      ::waitpid(p, nullptr, 0);
      sig_.update([&] { sig_.exited = true; });
    });
  }

  bool exited() {
    std::lock_guard<std::mutex> lock(sig_.mu);
    return sig_.exited;
  }

  // SIGTERM, then SIGKILL if it has not ended within 10 s.
  void kill_and_wait() {
    if (pid > 0 && !exited()) {
      ::kill(pid, SIGTERM);
      if (!sig_.wait_for(10s, [&] { return sig_.exited; })) ::kill(pid, SIGKILL);
    }
    reap();
  }

private:
  void reap() {
    if (reaper_.joinable()) reaper_.join();
    pid = -1;
  }
  signals& sig_;
  std::thread reaper_;
};

uint16_t free_loopback_port() {
  http_server_config cfg;
  cfg.bind_address = "127.0.0.1:0";
  auto s = http_server::start(cfg);
  return s.ok() && s.value() ? s.value()->port() : 0;  // released when s goes out of scope
}

// The first sample value of an instant-vector query result, or nullopt while there is none.
std::optional<double> first_value(const std::string& json) {
  auto at = json.find("\"value\":[");
  if (at == std::string::npos) return std::nullopt;
  auto q = json.find(",\"", at);
  if (q == std::string::npos) return std::nullopt;
  return std::strtod(json.c_str() + q + 2, nullptr);
}

std::string url_encode(const std::string& s) {
  std::string out;
  const char* hex = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

TEST(Prometheus, ScrapesTheExporterAndAnswersQueries) {
  std::string prometheus = find_executable("prometheus");
  ASSERT_FALSE(prometheus.empty()) << missing_tool("prometheus");
  signals sig;
  exporter e(&sig);
  ASSERT_TRUE(e.server);

  temp_dir dir("prometheus");
  std::ofstream(dir.path / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                                "scrape_configs:\n  - job_name: kas\n    static_configs:\n"
                                                "      - targets: ['127.0.0.1:"
                                             << e.server->port() << "']\n";
  prometheus_process prom(sig);
  // Prometheus commits a scrape's samples before it starts the next one: once the exporter answered
  // a second /metrics request, the first scrape is queryable. The free port may be taken between
  // probing and Prometheus binding it (it then exits at once): retry with another.
  bool scraped = false;
  for (int attempt = 0; attempt < 3 && !scraped; ++attempt) {
    prom.port = free_loopback_port();
    prom.log = dir.path / ("prometheus-" + std::to_string(attempt) + ".log");
    pid_t pid = spawn({prometheus, "--config.file=" + (dir.path / "prometheus.yml").string(),
                       "--storage.tsdb.path=" + (dir.path / "data").string(),
                       "--web.listen-address=127.0.0.1:" + std::to_string(prom.port), "--log.level=warn"},
                      {}, prom.log);
    ASSERT_GT(pid, 0) << "could not spawn " << prometheus;
    int before = 0;
    sig.update([&] { before = sig.scrapes; });
    prom.started(pid);
    ASSERT_TRUE(sig.wait_for(60s, [&] { return sig.exited || sig.scrapes >= before + 2; }))
      << "prometheus neither scraped twice nor exited within 60 s:\n" << read_file(prom.log);
    scraped = !prom.exited();
    if (!scraped && read_file(prom.log).find("address already in use") == std::string::npos)
      FAIL() << "prometheus exited at startup:\n" << read_file(prom.log);
  }
  ASSERT_TRUE(scraped) << read_file(prom.log);

  const std::string api = "http://127.0.0.1:" + std::to_string(prom.port) + "/api/v1/query?query=";
  const char* queries[] = {
      "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"}",
      "scheduler_pending_pods{queue=\"active\"}",
      "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Filter\"}",
      "scheduler_plugin_execution_duration_seconds_bucket{plugin=\"NodeResourcesFit\",le=\"+Inf\"}",
      "actor_messages_processed_total{actor=\"cycle_driver\"}",
      "actor_message_processing_seconds_count{actor=\"filter_score_worker-0\"}",
      "actor_pool_workers{pool=\"filter_score_worker\"}",
  };
  for (const char* q : queries) {
    SCOPED_TRACE(q);
    auto r = testing::http_request(api + url_encode(q), "GET", 5000);
    ASSERT_EQ(r.code, 200) << (r.code ? r.body : r.error) << "\nlog:\n" << read_file(prom.log);
    auto v = first_value(r.body);
    ASSERT_TRUE(v.has_value()) << "no sample after two scrapes: " << r.body;
    EXPECT_GT(*v, 0) << r.body;
  }
  prom.kill_and_wait();
}

}  // namespace
}  // namespace kas::obs
