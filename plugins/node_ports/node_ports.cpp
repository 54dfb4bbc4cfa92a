#include "plugins/node_ports/node_ports.hpp"

#include <algorithm>

namespace kas::plugins {

namespace {

// Host ports are immutable for a pod's lifetime, so AddPod/RemovePod never touch this state; the
// clone is a plain copy.
struct pre_filter_state final : fw::state_data {
  std::vector<host_port> ports;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

bool is_wildcard(const std::string& ip) { return ip.empty() || ip == "0.0.0.0"; }

}  // namespace

bool host_ports_overlap(const std::vector<host_port>& want, const std::vector<host_port>& used) {
  for (auto& w : want) {
    if (w.port <= 0) continue;
    for (auto& u : used) {
      if (u.port != w.port || u.protocol != w.protocol) continue;
      if (is_wildcard(w.ip) || is_wildcard(u.ip) || w.ip == u.ip) return true;
    }
  }
  return false;
}

result<std::shared_ptr<fw::plugin>> node_ports::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<node_ports>());
}

fw::status node_ports::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot&,
                                  fw::pre_filter_result&) const {
  if (pod.host_ports.empty()) return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  s->ports = pod.host_ports;
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

fw::status node_ports::filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const {
  // Without PreFilter state (PreFilter disabled, or a re-check outside the cycle) the compiled pod
  // already carries its host ports.
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const auto& want = s ? s->ports : pod.host_ports;
  for (auto& p : want)
    if (node.port_conflicts(p)) return fw::status::unschedulable(err_reason);
  return fw::status::ok();
}

std::vector<fw::cluster_event_with_hint> node_ports::events_to_register() const {
  // Ports are immutable, so only a deleted pod can free one.
  auto deleted_hint = [](const pod_info& pod, const fw::event_objects& o) {
    const pod_info* deleted = o.old_pod;
    if (!deleted) return fw::queueing_hint::queue;
    if (deleted->node_name.empty() || deleted->host_ports.empty()) return fw::queueing_hint::skip;
    return host_ports_overlap(pod.host_ports, deleted->host_ports) ? fw::queueing_hint::queue
                                                                    : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::pod, fw::act_delete, "PodDelete"}, deleted_hint},
    {{fw::event_resource::node, fw::act_add, "NodeAdd"}, {}},
  };
}

bool node_ports::sign_pod(const pod_info& pod, std::string& out) const {
  std::vector<std::string> parts;
  for (auto& p : pod.host_ports) parts.push_back(p.ip + "/" + p.protocol + "/" + std::to_string(p.port));
  std::sort(parts.begin(), parts.end());
  for (auto& p : parts) {
    out += p;
    out += ';';
  }
  return true;
}

}  // namespace kas::plugins
