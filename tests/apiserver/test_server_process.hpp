#pragma once
// The test apiserver binary (KAS_TEST_APISERVER) run as a child process for the tests that drive it
// over real sockets with the project's client (http_test.cpp, restart_test.cpp), and the two
// client-side helpers they share. Nothing here sleeps: readiness is the server's `listening on URL`
// line, and every wait has a generous bound that only turns a hang into a failure.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"

#ifndef KAS_TEST_APISERVER
#error "KAS_TEST_APISERVER (the kube-actor-test-apiserver binary) must be defined; see tests/apiserver/CMakeLists.txt"
#endif

namespace kas::testapi {

// How long a test waits for the server or an answer before it counts as hung (a bound, never a decision).
inline constexpr std::chrono::seconds kTestBound{30};

// The fixture binary, started on 127.0.0.1:0 with its kubeconfig and --cert-dir files in a fresh
// temporary directory, and its stdout kept open: it prints `listening on URL` when it starts and
// again whenever a restart's outage is over (next_line()). The destructor sends SIGTERM, reaps the
// process with a blocking waitpid and removes the directory.
class server_process {
public:
  explicit server_process(std::vector<std::string> extra = {}) {
    char tmpl[] = "/tmp/kas-test-apiserver-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    std::vector<std::string> args = {KAS_TEST_APISERVER, "--listen",  "127.0.0.1:0", "--kubeconfig-out",
                                     kubeconfig(),       "--cert-dir", cert_dir()};
    args.insert(args.end(), extra.begin(), extra.end());
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");  // no other child inherits them
    pid_ = fork();
    if (pid_ < 0) {
      close(out[0]);
      close(out[1]);
      throw std::runtime_error("fork");
    }
    if (pid_ == 0) {
      dup2(out[1], 1);  // the copy on stdout survives execv
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
    const std::string prefix = "listening on ";
    std::string line = next_line();
    if (line.rfind(prefix, 0) == 0) url_ = line.substr(prefix.size());
  }
  ~server_process() {
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
    close(out_);
    std::filesystem::remove_all(dir_);
  }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  // "" when the server did not come up.
  const std::string& url() const { return url_; }
  int port() const { return std::stoi(url_.substr(url_.rfind(':') + 1)); }
  std::string kubeconfig() const { return (dir_ / "kubeconfig").string(); }
  std::string cert_dir() const { return (dir_ / "certs").string(); }

  // The next line the server prints; "" at EOF or when none comes within kTestBound.
  std::string next_line() {
    auto deadline = std::chrono::steady_clock::now() + kTestBound;
    while (true) {
      if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return "";
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char b[512];
      ssize_t n = read(out_, b, sizeof b);
      if (n <= 0) return "";
      buf_.append(b, static_cast<size_t>(n));
    }
  }

private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int out_ = -1;
  std::string url_, buf_;
};

// A transport for the kubeconfig file `kubeconfig` (nullptr, with a test failure, when it does not load).
inline std::unique_ptr<api::http_transport> connect(const std::string& kubeconfig) {
  auto conn = load_kubeconfig(kubeconfig);
  EXPECT_TRUE(conn) << conn.err().message;
  if (!conn) return nullptr;
  auto t = api::http_transport::create(*conn);
  EXPECT_TRUE(t) << t.err().message;
  return t ? std::move(*t) : nullptr;
}

// Runs one request to completion (a default response, with a test failure, if none comes within
// kTestBound).
inline api::http_response call(api::http_transport& t, api::http_request r) {
  const std::string what = r.method + " " + r.path;
  auto done = std::make_shared<std::promise<api::http_response>>();
  auto f = done->get_future();
  r.timeout = std::chrono::seconds(20);
  t.start(std::move(r),
          api::http_callbacks{nullptr, nullptr, [done](api::http_response resp) { done->set_value(std::move(resp)); }});
  if (f.wait_for(kTestBound) != std::future_status::ready) {
    ADD_FAILURE() << "no answer to " << what << " within " << kTestBound.count() << " s";
    return {};
  }
  return f.get();
}

// The same with a JSON request: `body`, when there is one, is sent as application/json.
inline api::http_response call(api::http_transport& t, const std::string& method, const std::string& path,
                               std::string body = "") {
  api::http_request r;
  r.method = method;
  r.path = path;
  r.body = std::move(body);
  if (!r.body.empty()) r.content_type = "application/json";
  r.accept = "application/json";
  return call(t, std::move(r));
}

// A streamed watch: its decoded events as they arrive, and how it ended.
class stream_watch {
public:
  stream_watch(api::http_transport& t, const std::string& path, api::encoding e = api::encoding::json)
    : t_(t), decoder_(e) {
    api::http_request r;
    r.path = path;
    r.accept = std::string(api::media_type(e));
    r.stream = true;
    id_ = t.start(std::move(r), api::http_callbacks{nullptr,
                                                    [this](std::string_view chunk) {
                                                      std::lock_guard<std::mutex> l(m_);
                                                      if (auto s = decoder_.feed(chunk, events_); !s)
                                                        error_ = s.err().message;
                                                      cv_.notify_all();
                                                    },
                                                    [this](api::http_response resp) {
                                                      std::lock_guard<std::mutex> l(m_);
                                                      end_ = std::move(resp);
                                                      ended_ = true;
                                                      cv_.notify_all();
                                                    }});
  }
  ~stream_watch() {
    t_.cancel(id_);
    std::unique_lock<std::mutex> l(m_);
    cv_.wait_for(l, kTestBound, [&] { return ended_; });
  }
  stream_watch(const stream_watch&) = delete;
  stream_watch& operator=(const stream_watch&) = delete;
  // The events once n have arrived (or the stream ended first).
  std::vector<api::watch_event> events(size_t n) {
    std::unique_lock<std::mutex> l(m_);
    if (!cv_.wait_for(l, kTestBound, [&] { return events_.size() >= n || ended_; })) ADD_FAILURE() << "the watch stalled";
    return events_;
  }
  // How the stream ended (status 0 and an error when it failed below HTTP); nullopt if it did not
  // end within kTestBound.
  std::optional<api::http_response> end() {
    std::unique_lock<std::mutex> l(m_);
    if (!cv_.wait_for(l, kTestBound, [&] { return ended_; })) return std::nullopt;
    return end_;
  }
  // What the decoder refused, if anything.
  std::string decode_error() {
    std::lock_guard<std::mutex> l(m_);
    return error_;
  }

private:
  api::http_transport& t_;
  uint64_t id_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
  api::watch_decoder decoder_;
  std::vector<api::watch_event> events_;
  std::string error_;
  api::http_response end_;
  bool ended_ = false;
};

}  // namespace kas::testapi
