#pragma once
// Error values that carry where the bad input was. Exceptions never cross an actor boundary;
// code at the edges (decoders, config, manifest loader) returns result<T> instead.
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kas {

struct error {
  std::string message;  // full human text: "<file>: document 2: spec.containers[0].resources.requests.cpu: ..."
};

template <class T>
class result {
public:
  result(T value) : v_(std::move(value)) {}
  result(error e) : v_(std::move(e)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const error& err() const { return std::get<1>(v_); }

private:
  std::variant<T, error> v_;
};

struct ok_t {};
using status_or_error = result<ok_t>;

}  // namespace kas
