#pragma once
// Test helpers: build core/v1 protos through the generated API, then compile them.
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"

namespace kas::test {

using kv = std::vector<std::pair<std::string, std::string>>;

inline void set_list(google::protobuf::Map<std::string, k8s::meta::Quantity>* m, const kv& items) {
  for (auto& [k, v] : items) (*m)[k].set_string(v);
}

inline k8s::core::Container* add_container(k8s::core::PodSpec* spec, const kv& requests, const kv& limits = {},
                                           bool init = false, bool sidecar = false) {
  auto* c = init ? spec->add_init_containers() : spec->add_containers();
  c->set_name("c" + std::to_string(init ? spec->init_containers_size() : spec->containers_size()));
  set_list(c->mutable_resources()->mutable_requests(), requests);
  set_list(c->mutable_resources()->mutable_limits(), limits);
  if (sidecar) c->set_restart_policy("Always");
  return c;
}

inline std::shared_ptr<k8s::core::Pod> make_pod(const std::string& name, const std::string& uid = "") {
  auto p = std::make_shared<k8s::core::Pod>();
  p->mutable_metadata()->set_name(name);
  p->mutable_metadata()->set_namespace_("ns");
  if (!uid.empty()) p->mutable_metadata()->set_uid(uid);
  return p;
}

inline pod_info_ptr compile_ok(std::shared_ptr<const k8s::core::Pod> p) {
  auto r = compile_pod(std::move(p));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
  return r.ok() ? *r : nullptr;
}

// A pod with one container requesting cpu/memory and optional host ports, bound to `node`.
inline pod_info_ptr simple_pod(const std::string& name, const std::string& node, const std::string& cpu,
                               const std::string& mem, std::vector<int32_t> host_ports = {}) {
  auto p = make_pod(name, "uid-" + name);
  auto* c = add_container(p->mutable_spec(), {{"cpu", cpu}, {"memory", mem}});
  for (int32_t hp : host_ports) {
    auto* port = c->add_ports();
    port->set_container_port(hp);
    port->set_host_port(hp);
  }
  p->mutable_spec()->set_node_name(node);
  return compile_ok(p);
}

inline std::shared_ptr<node_info> simple_node(const std::string& name, const std::string& cpu = "4",
                                              const std::string& mem = "8Gi") {
  auto n = std::make_shared<k8s::core::Node>();
  n->mutable_metadata()->set_name(name);
  set_list(n->mutable_status()->mutable_allocatable(), {{"cpu", cpu}, {"memory", mem}, {"pods", "110"}});
  auto r = compile_node(n);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
  return r.ok() ? *r : nullptr;
}

inline resource_list rl(int64_t milli_cpu, int64_t memory, std::vector<std::pair<std::string, int64_t>> scalar = {},
                        int64_t ephemeral = 0) {
  resource_list r;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  r.ephemeral_storage = ephemeral;
  for (auto& [k, v] : scalar) r.set_scalar(k, v);
  return r;
}

inline std::string describe(const resource_list& r) {
  std::string s = "{cpu=" + std::to_string(r.milli_cpu) + "m mem=" + std::to_string(r.memory) +
                  " eph=" + std::to_string(r.ephemeral_storage) + " pods=" + std::to_string(r.allowed_pod_number);
  for (auto& [k, v] : r.scalar) s += " " + k + "=" + std::to_string(v);
  return s + "}";
}

inline label_map labels(std::vector<label_map::entry> e) { return label_map(std::move(e)); }

constexpr int64_t Mi = 1024LL * 1024;
constexpr int64_t Gi = 1024LL * Mi;

}  // namespace kas::test
