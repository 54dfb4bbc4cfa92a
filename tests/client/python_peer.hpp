#pragma once
// A Python HTTPS peer of the client tests (http_peer.py, list_watch_peer.py), run as a child
// process: it prints its port on its first stdout line, reads nothing but keeps its stdin open, and
// ends on SIGTERM. The destructor sends SIGTERM and reaps it with a blocking waitpid (no polling).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace kas::api::testing {

class python_peer {
public:
  // Runs `python3 KAS_TESTS_DIR/<script> args...`; port() is 0 if it printed no port.
  python_peer(const std::string& script, const std::vector<std::string>& args) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe");
    std::string path = std::string(KAS_TESTS_DIR) + "/" + script;
    std::vector<char*> argv{const_cast<char*>("python3"), path.data()};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      execvp("python3", argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    port_ = line.empty() ? 0 : std::stoi(line);
  }
  ~python_peer() {
    // SIGTERM ends Python at once (its default action); the blocking wait reaps it.
    close(stdin_);
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
  python_peer(const python_peer&) = delete;
  python_peer& operator=(const python_peer&) = delete;
  int port() const { return port_; }

private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int port_ = 0;
};

}  // namespace kas::api::testing
