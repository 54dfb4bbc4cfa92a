#pragma once
// Test fixtures: pods and nodes from YAML text, through the same codec and compilers the scheduler
// uses, so tests exercise the real compiled forms.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "messages/codec.hpp"
#include "plugins/framework/status.hpp"

namespace kas::test {

// Any API object from YAML, through the scheduler's codec. A fixture that does not decode is a
// broken test: it throws, naming `what` ("pv fixture: spec.capacity: ...").
template <class Proto>
std::shared_ptr<Proto> decode(std::string_view yaml, std::string_view what = "") {
  auto obj = std::make_shared<Proto>();
  if (auto st = codec::decode_yaml(yaml, *obj); !st)
    throw std::runtime_error((what.empty() ? std::string() : std::string(what) + " ") + "fixture: " + st.err().message);
  return obj;
}

inline pod_info_ptr pod_from_yaml(std::string_view yaml) {
  auto p = compile_pod(decode<k8s::core::Pod>(yaml, "pod"));
  if (!p) throw std::runtime_error("pod fixture: " + p.err().message);
  return *p;
}

inline std::shared_ptr<node_info> node_from_yaml(std::string_view yaml, const std::vector<pod_info_ptr>& pods = {}) {
  auto n = compile_node(decode<k8s::core::Node>(yaml, "node"));
  if (!n) throw std::runtime_error("node fixture: " + n.err().message);
  for (auto& p : pods) (*n)->add_pod(with_node_name(*p, (*n)->name));
  return *n;
}

// A pod with one container per entry of `containers` ("cpu,memory" requests, "" for none).
inline pod_info_ptr pod_with_requests(const std::string& name, const std::vector<std::pair<std::string, std::string>>& containers,
                                      const std::string& extra_spec = "") {
  std::string y = "metadata: {name: " + name + ", namespace: default, uid: " + name + "}\nspec:\n  containers:\n";
  int i = 0;
  for (auto& [cpu, mem] : containers) {
    y += "  - name: c" + std::to_string(i++) + "\n    image: busybox\n";
    if (!cpu.empty() || !mem.empty()) {
      y += "    resources: {requests: {";
      if (!cpu.empty()) y += "cpu: \"" + cpu + "\"";
      if (!cpu.empty() && !mem.empty()) y += ", ";
      if (!mem.empty()) y += "memory: \"" + mem + "\"";
      y += "}}\n";
    }
  }
  y += extra_spec;
  return pod_from_yaml(y);
}

inline std::shared_ptr<node_info> node_with_allocatable(const std::string& name, const std::string& cpu,
                                                        const std::string& mem, const std::string& pods = "110",
                                                        const std::vector<pod_info_ptr>& on_node = {}) {
  std::string y = "metadata: {name: " + name + "}\nstatus:\n  allocatable: {cpu: \"" + cpu + "\", memory: \"" + mem +
                  "\", pods: \"" + pods + "\"}\n";
  return node_from_yaml(y, on_node);
}

inline std::string reasons(const fw::status& s) {
  std::string out;
  for (auto r : s.reasons()) {
    if (!out.empty()) out += " | ";
    out += r;
  }
  return out;
}

// A selector with one requirement: key In values.
inline label_selector selector_in(const std::string& key, std::vector<std::string> values) {
  label_selector s;
  selector_requirement r;
  r.key = key;
  r.op = selector_op::in;
  r.values = std::move(values);
  s.requirements.push_back(r);
  return s;
}

}  // namespace kas::test
