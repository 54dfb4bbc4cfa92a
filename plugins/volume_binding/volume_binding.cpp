#include "plugins/volume_binding/volume_binding.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>

#include "messages/k8s/core.pb.h"
#include "plugins/helper/volumes_signer.hpp"
#include "plugins/volume_binding/pv_matching.hpp"
#include "plugins/volume_binding/state.hpp"

namespace kas::plugins {

using volume_binding_detail::err_no_state;
using volume_binding_detail::state;

namespace {

state* read_state(const fw::cycle_state& cs) { return cs.read_as<state>(volume_binding::state_key); }

// The plan Reserve turns into API objects: GetBindVolumeToClaim for each static binding, the
// selected-node annotation for each claim to provision.
result<volume_bindings> build_bindings(const pod_volumes& plan, const std::string& node) {
  volume_bindings out;
  out.node = node;
  for (const auto& b : plan.static_bindings) {
    bool dirty = false;
    std::shared_ptr<const k8s::core::PersistentVolume> pv = bind_volume_to_claim(*b.pv, *b.pvc, dirty);
    auto compiled = compile_pv(pv);
    if (!compiled) return error{"binding volume " + b.pv->name + ": " + compiled.err().message};
    out.pvs.push_back(std::move(pv));
    out.compiled_pvs.push_back(std::move(*compiled));
    out.wait_for.push_back(b.pvc->name);
  }
  for (const auto& p : plan.dynamic_provisions) {
    std::shared_ptr<const k8s::core::PersistentVolumeClaim> claim = claim_with_selected_node(*p.pvc, node);
    auto compiled = compile_pvc(claim);
    if (!compiled) return error{"provisioning claim " + p.pvc->key() + ": " + compiled.err().message};
    out.claims.push_back(std::move(claim));
    out.compiled_claims.push_back(std::move(*compiled));
    out.wait_for.push_back(p.pvc->name);
  }
  return out;
}

// Score's per-class sums (kube's Score): static bindings count their volumes' capacity; without
// them, and with capacity scoring, provisioned claims count the CSIStorageCapacity they fit in.
class_resource_map class_resources(const pod_volumes& plan, bool capacity_scoring) {
  class_resource_map out;
  if (!plan.static_bindings.empty() || !capacity_scoring) {
    for (const auto& b : plan.static_bindings) {
      auto& r = out[b.pv->storage_class];
      r.requested += b.pvc->request_bytes;
      r.capacity += b.pv->capacity_bytes;
    }
    return out;
  }
  for (const auto& p : plan.dynamic_provisions) {
    if (!p.node_capacity) continue;
    auto& r = out[p.pvc->class_name()];
    // The node's capacity is one pool per class: assigned, not summed over its claims.
    r.capacity = p.node_capacity->capacity_bytes.value_or(0);
    r.requested += p.pvc->request_bytes;
  }
  return out;
}

}  // namespace

volume_binding::volume_binding(volume_binding_args args, volume_binding_features features, fw::handle h)
  : args_(std::move(args)), features_(features), handle_(std::move(h)) {
  if (features_.storage_capacity_scoring) scorer_.emplace(args_.shape);
}

result<std::shared_ptr<fw::plugin>> volume_binding::make(const YAML::Node& args, const std::string& path,
                                                         const fw::handle& h) {
  return make_with_features(args, path, h, volume_binding_features{});
}

result<std::shared_ptr<fw::plugin>> volume_binding::make_with_features(const YAML::Node& args, const std::string& path,
                                                                       const fw::handle& h,
                                                                       const volume_binding_features& features) {
  auto parsed = parse_volume_binding_args(args, path, features);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<volume_binding>(std::move(*parsed), features, h));
}

const volume_bindings* volume_binding::assumed(const fw::cycle_state& cs) {
  const state* s = read_state(cs);
  if (!s || s->all_bound || !s->assumed) return nullptr;
  return &*s->assumed;
}

fw::status volume_binding::pre_filter(fw::cycle_state& cs, const pod_info& pod, const snapshot& snap,
                                      fw::pre_filter_result&) const {
  if (!pod.has_claims()) {
    // Most pods: one shared state that says so, never changed (Reserve and Unreserve leave a
    // claimless state alone), instead of an allocation per pod. SchedulingBasic paid 2-3 % for it.
    static const std::shared_ptr<state> no_claims = [] {
      auto st = std::make_shared<state>();
      st->all_bound = true;
      return st;
    }();
    cs.write(state_key, no_claims);
    return fw::status::skip();
  }
  auto st = std::make_shared<state>();
  st->objects = snap.objects_ptr();
  const volume_objects& objs = st->objects->volumes;
  bool has_claims = false;
  if (auto s = check_pod_claims(pod, objs, has_claims); !s.is_success()) return s;
  if (!has_claims) {
    cs.write(state_key, std::move(st));
    return fw::status::skip();
  }
  st->has_claims = true;
  st->claims = get_pod_volume_claims(pod, objs);
  // The PV controller binds these; the pod comes back when they are.
  if (!st->claims.unbound_immediate.empty()) return fw::status::unresolvable(err_reason_unbound_immediate);
  cs.write(state_key, std::move(st));
  return fw::status::ok();
}

fw::status volume_binding::filter(const fw::cycle_state& cs, const pod_info& pod, const node_info& node) const {
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  pod_volumes plan;
  if (s->has_claims) {
    auto st = find_pod_volumes(pod, s->claims, node, s->objects->volumes, plan);
    if (!st.is_success()) return st;
  }
  // Nothing to bind or provision here (every claim bound): Reserve finds no plan and takes the pod
  // as bound, as kube's does for a node without one. Storing empty plans per node cost a lock, a
  // string and a map node for every node every pod with claims passed.
  if (plan.static_bindings.empty() && plan.dynamic_provisions.empty()) return fw::status::ok();
  std::lock_guard<std::mutex> lock(s->mu);
  s->has_static_bindings = s->has_static_bindings || !plan.static_bindings.empty();
  s->by_node[node.name] = std::move(plan);
  return fw::status::ok();
}

fw::status volume_binding::pre_score(fw::cycle_state& cs, const pod_info&, const std::vector<const node_info*>&) const {
  if (!scorer_) return fw::status::skip();
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->has_static_bindings || features_.storage_capacity_scoring) return fw::status::ok();
  return fw::status::skip();
}

fw::status volume_binding::score(const fw::cycle_state& cs, const pod_info&, const node_info& node,
                                 int64_t& out) const {
  out = 0;
  if (!scorer_) return fw::status::ok();
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  std::lock_guard<std::mutex> lock(s->mu);
  auto it = s->by_node.find(node.name);
  if (it == s->by_node.end()) return fw::status::ok();
  out = scorer_->score(class_resources(it->second, features_.storage_capacity_scoring));
  return fw::status::ok();
}

fw::status volume_binding::reserve(fw::cycle_state& cs, const pod_info& pod, const std::string& node) const {
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  if (!s->has_claims) return fw::status::ok();  // all_bound already; the state may be shared
  s->assumed.reset();
  auto it = s->by_node.find(node);
  // A pod without claims has no plan: nothing to bind.
  if (it == s->by_node.end() || !s->objects || are_pod_volumes_bound(pod, s->objects->volumes)) {
    s->all_bound = true;
    return fw::status::ok();
  }
  s->all_bound = false;
  auto built = build_bindings(it->second, node);
  if (!built) return fw::status::error(built.err().message);
  s->assumed = std::move(*built);
  // kube's AssumePodVolumes: the cache holds these until the cluster's own versions arrive.
  const volume_objects& objs = s->objects->volumes;
  cs.assumed_storage.clear();
  for (const auto& pv : s->assumed->compiled_pvs) cs.assumed_storage.push_back(pv_change(objs.pvs.get(pv->name), pv));
  for (const auto& c : s->assumed->compiled_claims)
    cs.assumed_storage.push_back(pvc_change(objs.pvcs.get(c->key()), c));
  return fw::status::ok();
}

void volume_binding::unreserve(fw::cycle_state& cs, const pod_info&, const std::string&) const {
  if (state* s = read_state(cs); s && s->has_claims) s->assumed.reset();
  cs.assumed_storage.clear();
}

fw::status volume_binding::pre_bind_pre_flight(fw::cycle_state& cs, const pod_info&, const std::string& node) const {
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  if (s->all_bound) return fw::status::skip();
  if (!s->by_node.count(node)) return fw::status::error("no pod volumes found for node \"" + node + "\"");
  return fw::status::ok();
}

fw::status volume_binding::pre_bind(fw::cycle_state& cs, const pod_info&, const std::string& node) const {
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  if (s->all_bound || (s->assumed && s->assumed->wait_for.empty())) return fw::status::ok();
  if (!s->by_node.count(node)) return fw::status::error("no pod volumes found for node \"" + node + "\"");
  // Writing the claims means waiting for the PV controller; that only happens asynchronously.
  return fw::status::error("VolumeBinding's PreBind needs the asynchronous call");
}

fw::status volume_binding::pre_bind_async(fw::cycle_state& cs, const pod_info& pod, const std::string& node,
                                          std::function<void(fw::status)> done) const {
  state* s = read_state(cs);
  if (!s) return fw::status::error(err_no_state);
  if (s->all_bound) return fw::status::ok();
  if (!s->by_node.count(node)) return fw::status::error("no pod volumes found for node \"" + node + "\"");
  if (!s->assumed || s->assumed->node != node)
    return fw::status::error("failed to get cached bindings for pod \"" + pod.key() + "\"");
  const volume_bindings& b = *s->assumed;
  if (b.wait_for.empty()) return fw::status::ok();
  if (!handle_.client) return fw::status::error("VolumeBinding has no cluster client to bind volumes");
  handle_.client->bind_volumes(pod, b.pvs, b.claims, b.wait_for, std::chrono::seconds(args_.bind_timeout_seconds),
                               std::move(done));
  return fw::status{fw::code::pending};
}

bool volume_binding::sign_pod(const pod_info& pod, std::string& out) const {
  // kube's VolumesSigner (helper/volumes_signer.hpp) over each source's deterministic protobuf
  // bytes, length-prefixed as bytes may hold any separator. An ephemeral volume's claim is the
  // pod's own, so its name is added: two pods with equal templates still get different claims.
  auto parts = helper::sorted_volume_sources(pod, [&](const k8s::core::Volume& v) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream sos(&bytes);
      google::protobuf::io::CodedOutputStream cos(&sos);
      cos.SetSerializationDeterministic(true);
      v.volume_source().SerializeToCodedStream(&cos);
    }
    if (!bytes.empty() && v.volume_source().has_ephemeral()) bytes += "|" + pod.name + "-" + v.name();
    return bytes;
  });
  for (const auto& p : parts) {
    out += std::to_string(p.size());
    out += ':';
    out += p;
  }
  out += '|';
  return true;
}

}  // namespace kas::plugins
