#pragma once
// The command-line front end (DESIGN §2). Each command returns the process exit code:
// 0 success, 2 bad input (one clear message on stderr), 1 internal failure.
#include <string>
#include <vector>

namespace kas {

struct simulate_args {
  std::vector<std::string> clusters;
  std::string config;
  std::string output = "table";  // json | table
  bool explain = false;
};

int run_simulate(const simulate_args& args);

}  // namespace kas
