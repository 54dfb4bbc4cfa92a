#include "plugins/framework/status.hpp"

#include <mutex>
#include <unordered_set>

namespace kas::fw {

std::string_view to_string(code c) {
  switch (c) {
    case code::success: return "Success";
    case code::error: return "Error";
    case code::unschedulable: return "Unschedulable";
    case code::unschedulable_and_unresolvable: return "UnschedulableAndUnresolvable";
    case code::wait: return "Wait";
    case code::skip: return "Skip";
    case code::pending: return "Pending";
  }
  return "Unknown";
}

std::string_view intern(std::string_view s) {
  // Interned reason texts are few (one per distinct reason) and live for the process. The lock
  // guards this string table only, never scheduling state; hot paths intern once per plugin setup
  // or per distinct extended-resource name.
  static std::mutex mu;
  static std::unordered_set<std::string> table;
  std::lock_guard<std::mutex> lock(mu);
  return *table.emplace(s).first;
}

std::string status::message() const {
  std::string out;
  for (size_t i = 0; i < reasons_.size(); ++i) {
    if (i) out += ", ";
    out += reasons_[i];
  }
  return out;
}

}  // namespace kas::fw
