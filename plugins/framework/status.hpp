#pragma once
// Framework status codes and the status value plugins return (kube-scheduler's framework.Status).
//
// Reasons are string_views that must outlive the status: string literals, or text interned with
// intern(). That keeps a failed Filter (the common case on a busy cluster) allocation-free.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kas::fw {

enum class code : uint8_t {
  success,
  error,
  unschedulable,
  unschedulable_and_unresolvable,
  wait,
  skip,
  pending,
};

std::string_view to_string(code c);

// Returns a view of a process-lifetime copy of `s` (same text -> same storage).
std::string_view intern(std::string_view s);

class status {
public:
  status() = default;
  explicit status(code c) : code_(c) {}
  status(code c, std::string_view reason) : code_(c) { reasons_.push_back(reason); }
  status(code c, std::vector<std::string_view> reasons) : code_(c), reasons_(std::move(reasons)) {}

  static status ok() { return status{}; }
  static status skip() { return status{code::skip}; }
  static status unschedulable(std::string_view r) { return {code::unschedulable, r}; }
  static status unresolvable(std::string_view r) { return {code::unschedulable_and_unresolvable, r}; }
  static status error(std::string_view r) { return {code::error, intern(r)}; }

  code get_code() const { return code_; }
  bool is_success() const { return code_ == code::success; }
  bool is_skip() const { return code_ == code::skip; }
  bool is_wait() const { return code_ == code::wait; }
  bool is_rejected() const {
    return code_ == code::unschedulable || code_ == code::unschedulable_and_unresolvable ||
           code_ == code::pending;
  }
  const std::vector<std::string_view>& reasons() const { return reasons_; }
  // Reasons joined with ", " (kube's Status.Message()).
  std::string message() const;

  // The plugin that produced a non-success status (set by the framework runner).
  std::string_view plugin() const { return plugin_; }
  status& with_plugin(std::string_view p) {
    plugin_ = p;
    return *this;
  }

private:
  code code_ = code::success;
  std::vector<std::string_view> reasons_;
  std::string_view plugin_;
};

}  // namespace kas::fw
