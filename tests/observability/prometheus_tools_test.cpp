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

// A started exporter: the kube fixture registry served on a free loopback port.
struct exporter {
  metrics_registry reg;
  std::unique_ptr<http_server> server;
  exporter() {
    testing::populate(reg);
    http_server_config cfg;
    cfg.bind_address = "127.0.0.1:0";
    cfg.collectables = {&reg};
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

// A real Prometheus server on loopback, killed when this goes out of scope.
struct prometheus_process {
  pid_t pid = -1;
  uint16_t port = 0;
  fs::path log;

  ~prometheus_process() { kill_and_wait(); }

  void kill_and_wait() {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }

  bool exited() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == pid) pid = -1;
    return pid <= 0;
  }
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
  exporter e;
  ASSERT_TRUE(e.server);

  temp_dir dir("prometheus");
  std::ofstream(dir.path / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                                "scrape_configs:\n  - job_name: kas\n    static_configs:\n"
                                                "      - targets: ['127.0.0.1:"
                                             << e.server->port() << "']\n";
  prometheus_process prom;
  // The free port may be taken between probing and Prometheus binding it: retry with another.
  for (int attempt = 0; attempt < 3 && prom.pid <= 0; ++attempt) {
    prom.port = free_loopback_port();
    prom.log = dir.path / ("prometheus-" + std::to_string(attempt) + ".log");
    prom.pid = spawn({prometheus, "--config.file=" + (dir.path / "prometheus.yml").string(),
                      "--storage.tsdb.path=" + (dir.path / "data").string(),
                      "--web.listen-address=127.0.0.1:" + std::to_string(prom.port), "--log.level=warn"},
                     {}, prom.log);
    ASSERT_GT(prom.pid, 0) << "could not spawn " << prometheus;
    std::this_thread::sleep_for(300ms);
    if (prom.exited() && read_file(prom.log).find("address already in use") == std::string::npos)
      FAIL() << "prometheus exited at startup:\n" << read_file(prom.log);
  }
  ASSERT_FALSE(prom.exited()) << read_file(prom.log);

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
    std::optional<double> v;
    std::string last;
    for (auto deadline = std::chrono::steady_clock::now() + 60s; !v && std::chrono::steady_clock::now() < deadline;) {
      ASSERT_FALSE(prom.exited()) << "prometheus died:\n" << read_file(prom.log);
      auto r = testing::http_request(api + url_encode(q), "GET", 2000);
      last = r.code ? r.body : r.error;
      if (r.code == 200) v = first_value(r.body);
      if (!v) std::this_thread::sleep_for(250ms);
    }
    ASSERT_TRUE(v.has_value()) << "no sample within 60 s; last answer: " << last << "\nlog:\n" << read_file(prom.log);
    EXPECT_GT(*v, 0) << last;
  }
  prom.kill_and_wait();
}

}  // namespace
}  // namespace kas::obs
