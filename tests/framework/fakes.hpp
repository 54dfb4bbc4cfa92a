#pragma once
// Test fakes for the framework runtime: one scriptable plugin that implements every extension point
// and records each call ("Name.point") into a log shared with the test, a plugin that implements no
// point at all, and a harness that registers fakes and builds a framework from a hand-made profile.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "config/profile.hpp"
#include "plugins/framework/runtime/framework.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::test {

using call_log = std::vector<std::string>;

// What a fake answers at each point. Reasons must be string literals (status holds views).
struct fake_spec {
  std::string name;
  fw::status pre_filter, filter, post_filter, pre_score, score, reserve, permit, pre_bind, bind;
  std::optional<std::set<std::string>> pre_filter_nodes;  // PreFilterResult; nullopt = all nodes
  std::map<std::string, int64_t> scores;                  // raw Score per node name (default 0)
  bool normalize = false;
  std::function<void(std::vector<fw::node_score>&)> normalize_fn;
  std::chrono::milliseconds permit_timeout{0};
};

// A fake that succeeds everywhere.
inline fake_spec spec(std::string name) {
  fake_spec s;
  s.name = std::move(name);
  return s;
}

class fake_plugin final : public fw::queue_sort_plugin,
                          public fw::pre_filter_plugin,
                          public fw::filter_plugin,
                          public fw::post_filter_plugin,
                          public fw::pre_score_plugin,
                          public fw::score_plugin,
                          public fw::reserve_plugin,
                          public fw::permit_plugin,
                          public fw::pre_bind_plugin,
                          public fw::bind_plugin,
                          public fw::post_bind_plugin {
public:
  fake_plugin(fake_spec spec, std::shared_ptr<call_log> log) : spec_(std::move(spec)), log_(std::move(log)) {}

  std::string_view name() const override { return spec_.name; }

  bool less(const fw::queued_pod_info& a, const fw::queued_pod_info& b) const override {
    return a.timestamp_ns < b.timestamp_ns;
  }
  fw::status pre_filter(fw::cycle_state&, const pod_info&, const snapshot&,
                        fw::pre_filter_result& r) const override {
    record("preFilter");
    r.node_names = spec_.pre_filter_nodes;
    return spec_.pre_filter;
  }
  fw::status filter(const fw::cycle_state&, const pod_info&, const node_info&) const override {
    record("filter");
    return spec_.filter;
  }
  fw::status post_filter(fw::cycle_state&, const pod_info&, const snapshot&, const fw::node_to_status&,
                         const fw::framework_ops&, fw::post_filter_result&) const override {
    record("postFilter");
    return spec_.post_filter;
  }
  fw::status pre_score(fw::cycle_state&, const pod_info&, const std::vector<const node_info*>&) const override {
    record("preScore");
    return spec_.pre_score;
  }
  fw::status score(const fw::cycle_state&, const pod_info&, const node_info& node, int64_t& out) const override {
    record("score");
    auto it = spec_.scores.find(node.name);
    out = it == spec_.scores.end() ? 0 : it->second;
    return spec_.score;
  }
  bool has_normalize() const override { return spec_.normalize; }
  fw::status normalize_score(const fw::cycle_state&, const pod_info&,
                             std::vector<fw::node_score>& scores) const override {
    record("normalize");
    if (spec_.normalize_fn) spec_.normalize_fn(scores);
    return fw::status::ok();
  }
  fw::status reserve(fw::cycle_state&, const pod_info&, const std::string&) const override {
    record("reserve");
    return spec_.reserve;
  }
  void unreserve(fw::cycle_state&, const pod_info&, const std::string&) const override { record("unreserve"); }
  fw::status permit(fw::cycle_state&, const pod_info&, const std::string&,
                    std::chrono::milliseconds& timeout) const override {
    record("permit");
    timeout = spec_.permit_timeout;
    return spec_.permit;
  }
  fw::status pre_bind(fw::cycle_state&, const pod_info&, const std::string&) const override {
    record("preBind");
    return spec_.pre_bind;
  }
  fw::status bind(const fw::cycle_state&, const pod_info&, const std::string&,
                  fw::bind_callback done) const override {
    record("bind");
    // A Pending bind completes later through `done`; the fake completes it at once.
    if (spec_.bind.get_code() == fw::code::pending && done) done(fw::status::ok());
    return spec_.bind;
  }
  void post_bind(const fw::cycle_state&, const pod_info&, const std::string&) const override { record("postBind"); }

private:
  void record(const char* point) const { log_->push_back(spec_.name + "." + point); }

  fake_spec spec_;
  std::shared_ptr<call_log> log_;
};

// Implements no extension point.
class bare_plugin final : public fw::plugin {
public:
  std::string_view name() const override { return "Bare"; }
};

// A registry of fakes plus a profile with one queue sort ("Sort") and one bind plugin ("Binder").
struct harness {
  std::shared_ptr<call_log> log = std::make_shared<call_log>();
  fw::registry reg;
  profile_config profile;

  harness() {
    add(spec("Sort"));
    add(spec("Binder"));
    profile.queue_sort = {"Sort"};
    profile.bind = {"Binder"};
    EXPECT_TRUE(reg.add("Bare", [](const YAML::Node&, const std::string&, const fw::handle&) {
                     return result<std::shared_ptr<fw::plugin>>(std::make_shared<bare_plugin>());
                   }).ok());
  }

  void add(fake_spec spec) {
    auto name = spec.name;
    auto log_ref = log;
    auto st = reg.add(name, [spec = std::move(spec), log_ref](const YAML::Node&, const std::string&,
                                                              const fw::handle&) {
      return result<std::shared_ptr<fw::plugin>>(std::make_shared<fake_plugin>(spec, log_ref));
    });
    EXPECT_TRUE(st.ok()) << name;
  }

  std::shared_ptr<fw::framework> build(const fw::handle& h = fw::handle{}) {
    auto r = fw::framework::build(profile, reg, h, "profiles[0]");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
    return r.ok() ? *r : nullptr;
  }

  // Calls recorded for one point ("filter"), in order, as plugin names.
  std::vector<std::string> calls(const std::string& point) const {
    std::vector<std::string> out;
    for (auto& c : *log) {
      auto dot = c.find('.');
      if (c.substr(dot + 1) == point) out.push_back(c.substr(0, dot));
    }
    return out;
  }
};

// A pod compiled from a core/v1 Pod, as the scheduler sees it.
inline pod_info_ptr test_pod(const std::string& name = "p") {
  auto p = std::make_shared<k8s::core::Pod>();
  p->mutable_metadata()->set_name(name);
  p->mutable_metadata()->set_namespace_("default");
  p->mutable_metadata()->set_uid("uid-" + name);
  p->mutable_spec()->add_containers()->set_name("c");
  auto r = compile_pod(p);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
  return r.ok() ? *r : std::make_shared<const pod_info>();
}

inline node_info named_node(const std::string& name) {
  node_info n;
  n.name = name;
  return n;
}

// A snapshot of `count` bare nodes named n0, n1, ..., at indexes 0, 1, ...
inline snapshot named_nodes(int count) {
  snapshot snap;
  for (int i = 0; i < count; ++i)
    snap.add_node(std::make_shared<node_info>(named_node("n" + std::to_string(i))), static_cast<uint64_t>(i + 1));
  return snap;
}

}  // namespace kas::test
