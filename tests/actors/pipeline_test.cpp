// The whole scheduling pipeline over an embedded cluster, on a real actor system (2 threads), driven
// as `simulate` drives it: objects go into the cluster, start_scheduler, wait for the queue's
// quiescence reply, then read the recorder's outcomes and the cluster's final pods. Every check
// waits on a reply with a timeout; nothing sleeps. The placement invariants (actors/invariants.hpp) are checked on the
// final placement after every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "actors/embedded_cluster.hpp"
#include "actors/invariants.hpp"
#include "actors/scheduler.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/storage.pb.h"
#include "config/profile.hpp"
#include "tests/actors/actor_fixtures.hpp"

namespace kas::test {

// What the ordering probe saw in the cluster's watch stream.
struct probe_report {
  uint64_t events = 0;
  std::vector<std::string> violations;  // bindings to a node after its deletion
};

}  // namespace kas::test

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::test::probe_report)

namespace kas::test {
namespace {

using namespace std::chrono_literals;
constexpr auto reply_timeout = std::chrono::seconds(20);

struct test_system_config : caf::actor_system_config {
  test_system_config() {
    set("scheduler.max-threads", static_cast<size_t>(2));
    set("logger.verbosity", caf::atom("quiet"));
  }
};

// --- invariants (actors/invariants.hpp) ------------------------------------------------------------------

// The checks themselves live in actors/invariants (bench runs them too).

// --- the harness --------------------------------------------------------------------------------

class pipeline_env {
public:
  pipeline_env() : sys_(cfg_), self_(sys_) {
    cluster_options copts;
    copts.node_agents = 2;
    cluster_ = spawn_embedded_cluster(sys_, copts);
  }
  ~pipeline_env() {
    if (inst_) stop_scheduler(*inst_);
    caf::anon_send_exit(cluster_, caf::exit_reason::user_shutdown);
  }

  caf::actor_system& sys() { return sys_; }
  cluster_actor& cluster() { return cluster_; }
  scheduler_instance& inst() { return *inst_; }

  void add_node(const node_info_ptr& n) {
    nodes_.push_back(n);
    caf::anon_send(cluster_, create_atom::value, n);
  }
  void add_pod(const pod_info_ptr& p) {
    if (p->node_name.empty()) pending_.push_back(p);
    caf::anon_send(cluster_, create_atom::value, p);
  }
  const std::vector<node_info_ptr>& nodes() const { return nodes_; }
  const std::vector<pod_info_ptr>& pending() const { return pending_; }

  // Starts the scheduler over the cluster as `simulate` does (skip_idle_backoff unless told).
  bool start(scheduler_options opts) {
    if (opts.profiles.empty()) opts.profiles.push_back(default_profile());
    auto r = start_scheduler(sys_, opts, cluster_);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
    if (!r.ok()) return false;
    inst_ = std::make_unique<scheduler_instance>(*r);
    return true;
  }

  // Waits for the queue to be quiescent (nothing active, in backoff or in flight).
  bool wait_quiescent() {
    bool ok = false;
    self_->request(inst_->wiring->queue, reply_timeout, done_atom::value)
      .receive([&](const queue_stats&) { ok = true; },
               [&](const caf::error& e) { ADD_FAILURE() << "queue never quiescent: " << sys_.render(e); });
    return ok;
  }

  std::unordered_map<std::string, pod_outcome> outcomes() {
    std::unordered_map<std::string, pod_outcome> out;
    self_->request(inst_->wiring->recorder, reply_timeout, outcomes_atom::value)
      .receive(
        [&](const std::vector<pod_outcome>& v) {
          for (auto& o : v) out[o.uid] = o;
        },
        [&](const caf::error& e) { ADD_FAILURE() << "recorder: " << sys_.render(e); });
    return out;
  }

  std::vector<pod_info_ptr> cluster_pods() {
    std::vector<pod_info_ptr> out;
    self_->request(cluster_, reply_timeout, list_atom::value)
      .receive([&](const std::vector<pod_info_ptr>& v) { out = v; },
               [&](const caf::error& e) { ADD_FAILURE() << "cluster list: " << sys_.render(e); });
    return out;
  }

  // Uids of the pods the cluster evicted for preemption, once per "Preempted" Event.
  std::vector<std::string> preempted_events() {
    std::vector<std::string> out;
    self_->request(cluster_, reply_timeout, list_atom::value, cluster_event_record{})
      .receive(
        [&](const std::vector<cluster_event_record>& v) {
          for (auto& e : v)
            if (e.reason == "Preempted") out.push_back(e.pod_uid);
        },
        [&](const caf::error& e) { ADD_FAILURE() << "cluster events: " << sys_.render(e); });
    return out;
  }
  // Every Event the cluster recorded.
  std::vector<cluster_event_record> events() {
    std::vector<cluster_event_record> out;
    self_->request(cluster_, reply_timeout, list_atom::value, cluster_event_record{})
      .receive([&](const std::vector<cluster_event_record>& v) { out = v; },
               [&](const caf::error& e) { ADD_FAILURE() << "cluster events: " << sys_.render(e); });
    return out;
  }
  std::set<std::string> preempted_uids() {
    auto v = preempted_events();
    return {v.begin(), v.end()};
  }

  // How many gangs the permit coordinator holds state for.
  uint64_t permit_gangs() {
    uint64_t out = ~uint64_t{0};
    self_->request(inst_->wiring->permit, reply_timeout, stats_atom::value)
      .receive([&](uint64_t n) { out = n; },
               [&](const caf::error& e) { ADD_FAILURE() << "permit coordinator: " << sys_.render(e); });
    return out;
  }

  cluster_stats stats() {
    cluster_stats out;
    self_->request(cluster_, reply_timeout, stats_atom::value)
      .receive([&](const cluster_stats& s) { out = s; },
               [&](const caf::error& e) { ADD_FAILURE() << "cluster stats: " << sys_.render(e); });
    return out;
  }

  // Polls the cluster's counters (each poll is a request round trip, no sleep) until `running` pods
  // run or the bound is hit.
  bool wait_running(size_t running, int max_polls = 200000) {
    for (int i = 0; i < max_polls; ++i)
      if (stats().running >= running) return true;
    return false;
  }

  // Every pending pod is accounted for, and the recorder agrees with the cluster.
  void expect_accounted_for() {
    auto outs = outcomes();
    std::unordered_map<std::string, pod_info_ptr> in_cluster;
    for (auto& p : cluster_pods()) in_cluster[p->uid] = p;
    auto preempted = preempted_uids();
    for (auto& p : pending_) {
      auto it = outs.find(p->uid);
      if (it == outs.end()) {
        ADD_FAILURE() << p->name << " has no outcome (lost)";
        continue;
      }
      auto& o = it->second;
      auto found = in_cluster.find(p->uid);
      if (found == in_cluster.end()) {
        // Scheduled (or assumed) earlier in the run, then evicted by a higher-priority pod's
        // preemption: accounted for by its Preempted event.
        EXPECT_TRUE(preempted.count(p->uid)) << p->name << " is gone from the cluster without a Preempted event; "
                                             << "recorded " << o.status << ": " << o.message;
        continue;
      }
      auto cp = found->second;
      if (o.status == "Scheduled") {
        EXPECT_EQ(cp->node_name, o.node) << p->name << ": recorded Scheduled on " << o.node;
      } else {
        // Not bound: Unschedulable, or Error when every attempt failed with an error (a bind the
        // cluster keeps refusing); either way with its reason.
        EXPECT_TRUE(o.status == "Unschedulable" || o.status == "Error") << p->name << ": " << o.status;
        EXPECT_FALSE(o.message.empty()) << p->name;
        EXPECT_TRUE(cp->node_name.empty()) << p->name << " bound to " << cp->node_name << " but recorded " << o.status;
      }
    }
  }

  void expect_invariants() {
    auto pods = cluster_pods();
    auto rep = check_placement(nodes_, pods, nullptr);
    for (auto& v : rep.violations) ADD_FAILURE() << v;
    EXPECT_EQ(stats().bind_conflicts, 0u) << "a pod was bound twice";
    expect_accounted_for();
  }

private:
  test_system_config cfg_;
  caf::actor_system sys_;
  caf::scoped_actor self_;
  cluster_actor cluster_;
  std::unique_ptr<scheduler_instance> inst_;
  std::vector<node_info_ptr> nodes_;
  std::vector<pod_info_ptr> pending_;
};

size_t count_status(const std::unordered_map<std::string, pod_outcome>& outs, const std::string& status) {
  size_t n = 0;
  for (auto& [uid, o] : outs) n += o.status == status;
  return n;
}

// --- one pod end to end -------------------------------------------------------------------------

TEST(PipelineTest, OnePodEndToEnd) {
  pipeline_env env;
  env.add_node(make_node(node("small", "1", "1Gi")));
  env.add_node(make_node(node("big", "8", "16Gi")));
  node_spec tainted = node("tainted", "16", "32Gi");
  tainted.taints = {{"dedicated", "gpu", "NoSchedule"}};
  env.add_node(make_node(tainted));
  env.add_pod(make_pod(pod("p1", "2", "2Gi")));
  ASSERT_TRUE(env.start({}));
  ASSERT_TRUE(env.wait_quiescent());

  auto outs = env.outcomes();
  ASSERT_EQ(outs.count("p1"), 1u);
  EXPECT_EQ(outs["p1"].status, "Scheduled");
  EXPECT_EQ(outs["p1"].node, "big");
  EXPECT_EQ(outs["p1"].attempts, 1);
  auto pods = env.cluster_pods();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]->node_name, "big");

  ASSERT_TRUE(env.wait_running(1)) << "the node agent never started the pod";
  pods = env.cluster_pods();
  EXPECT_EQ(pods[0]->phase, "Running");
  auto s = env.stats();
  EXPECT_EQ(s.bound, 1u);
  EXPECT_EQ(s.running, 1u);
  EXPECT_GE(s.events, 1u);  // the Scheduled event
  env.expect_invariants();
}

TEST(PipelineTest, NoNodesMeansUnschedulableNotARetryLoop) {
  // kube: ErrNoNodesAvailable is UnschedulableAndUnresolvable. As an Error it would back off and,
  // with the idle skip, be retried at once forever: the queue would never be quiescent.
  pipeline_env env;
  env.add_pod(make_pod(pod("p1", "1", "1Gi")));
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  auto outs = env.outcomes();
  EXPECT_EQ(outs["p1"].status, "Unschedulable");
  EXPECT_EQ(outs["p1"].message, "no nodes available to schedule pods");
  EXPECT_EQ(outs["p1"].attempts, 1);
  env.expect_invariants();
}

// --- invariants on a randomized cluster --------------------------------------------------------

void fill_random_cluster(pipeline_env& env, uint64_t seed, size_t nodes, size_t pods) {
  std::mt19937_64 rng(seed);
  auto pick = [&](auto const& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const std::vector<std::string> cpus = {"2", "4", "8"}, mems = {"4Gi", "8Gi", "16Gi"}, max_pods = {"8", "16", "110"};
  const std::vector<std::string> zones = {"a", "b", "c"}, disks = {"ssd", "hdd"}, dedicated = {"gpu", "infra"};
  const std::vector<int32_t> ports = {7000, 8080, 9090};
  for (size_t i = 0; i < nodes; ++i) {
    node_spec n = node("node-" + std::to_string(i), pick(cpus), pick(mems), pick(max_pods));
    n.labels = {{"zone", pick(zones)}, {"disk", pick(disks)}};
    if (chance(0.2)) n.taints.push_back({"dedicated", pick(dedicated), "NoSchedule"});
    if (chance(0.05)) n.taints.push_back({"maintenance", "true", "NoExecute"});
    if (chance(0.1)) n.taints.push_back({"soft", "x", "PreferNoSchedule"});
    env.add_node(make_node(n));
  }
  const std::vector<std::string> pod_cpus = {"100m", "250m", "500m", "1", "1500m", "2"};
  const std::vector<std::string> pod_mems = {"128Mi", "256Mi", "512Mi", "1Gi", "2Gi"};
  for (size_t i = 0; i < pods; ++i) {
    pod_spec p = pod("pod-" + std::to_string(i), pick(pod_cpus), pick(pod_mems));
    p.priority = static_cast<int32_t>(std::uniform_int_distribution<int>(0, 3)(rng));
    if (chance(0.3)) p.node_selector = {{"zone", pick(zones)}};
    if (chance(0.1)) {
      p.affinity_key = "disk";
      p.affinity_values = {"ssd"};
    }
    if (chance(0.3)) p.tolerations.push_back({"dedicated", "Equal", pick(dedicated), "NoSchedule"});
    if (chance(0.05)) p.tolerations.push_back({"maintenance", "Exists", "", ""});
    if (chance(0.15)) p.host_ports.push_back(pick(ports));
    env.add_pod(make_pod(p));
  }
}

struct runtime_case {
  std::string name;
  uint32_t pipeline_depth;
  uint32_t workers;
};

class RandomClusterTest : public ::testing::TestWithParam<runtime_case> {};

TEST_P(RandomClusterTest, InvariantsHold) {
  const auto& c = GetParam();
  pipeline_env env;
  fill_random_cluster(env, 42, 50, 500);
  scheduler_options opts;
  opts.runtime.pipeline_depth = c.pipeline_depth;
  opts.runtime.workers = c.workers;
  opts.skip_idle_backoff = true;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();
  auto outs = env.outcomes();
  // The seed gives a cluster where both outcomes occur; a run where everything fails is a bug too.
  EXPECT_GT(count_status(outs, "Scheduled"), 100u);
  EXPECT_GT(count_status(outs, "Unschedulable"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Runtime, RandomClusterTest,
                         ::testing::Values(runtime_case{"depth1_workers1", 1, 1}, runtime_case{"depth1_workers3", 1, 3},
                                           runtime_case{"depth8_workers1", 8, 1}, runtime_case{"depth8_workers3", 8, 3}),
                         [](const ::testing::TestParamInfo<runtime_case>& i) { return i.param.name; });

// --- gangs ----------------------------------------------------------------------------------------

// Two gangs of 8 pods x 2 cpu (minCount 8) compete for 4 nodes x 4 cpu, room for one: one gang ends
// whole and the other wholly pending, nothing partly placed or left reserved, with one pod in flight
// or many. One gang is upstream's PodGroup form, the other Coscheduling's.
class CompetingGangsTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(CompetingGangsTest, OneGangWholeTheOtherWhollyPending) {
  pipeline_env env;
  for (int i = 0; i < 4; ++i) env.add_node(make_node(node("n" + std::to_string(i), "4", "8Gi")));
  auto objs = std::make_shared<cluster_objects>();
  auto group = [&](pod_group_api api, const std::string& name) {
    auto g = std::make_shared<pod_group>();
    g->api = api;
    g->ns = "default";
    g->name = name;
    g->gang = true;
    g->min_count = 8;
    objs->pod_groups[pod_group_key(*g)] = g;
  };
  group(pod_group_api::workload, "a");
  group(pod_group_api::coscheduling, "b");
  caf::anon_send(env.cluster(), create_atom::value, cluster_objects_ptr(objs));
  std::map<std::string, std::string> gang_of;  // uid -> gang
  for (int i = 0; i < 8; ++i) {
    auto a = std::make_shared<pod_info>(*make_pod(pod("a" + std::to_string(i), "2", "1Gi")));
    a->group_api = pod_group_api::workload;
    a->group_name = "a";
    a->group_key = pod_group_key(a->group_api, a->ns, "a");
    pod_spec bs = pod("b" + std::to_string(i), "2", "1Gi");
    bs.labels = {{coscheduling_pod_group_label, "b"}};
    auto b = make_pod(bs);
    ASSERT_EQ(b->group_api, pod_group_api::coscheduling);
    gang_of[a->uid] = "a";
    gang_of[b->uid] = "b";
    env.add_pod(a);
    env.add_pod(b);
  }
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = GetParam();
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();
  std::map<std::string, size_t> scheduled;
  auto outs = env.outcomes();
  for (auto& [uid, gang] : gang_of)
    if (outs[uid].status == "Scheduled") ++scheduled[gang];
  EXPECT_EQ(scheduled.size(), 1u) << "exactly one gang placed";
  for (auto& [gang, n] : scheduled) EXPECT_EQ(n, 8u) << "gang " << gang << " partly placed";
  // Nothing is left reserved: every node's room is what its bound pods use.
  size_t bound = 0;
  for (auto& p : env.cluster_pods()) bound += !p->node_name.empty();
  EXPECT_EQ(bound, 8u);
  for (auto& [uid, o] : outs)
    if (o.status != "Scheduled") {
      EXPECT_NE(o.message.find("pod group default/"), std::string::npos) << o.name << ": " << o.message;
    }
  // Nothing of either gang's attempts is in flight: the permit coordinator holds no state for the
  // gang that bound nor for the one that failed (a long-running scheduler would keep it forever).
  EXPECT_EQ(env.permit_gangs(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Depth, CompetingGangsTest, ::testing::Values(1u, 16u),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return "depth" + std::to_string(i.param); });

// A gang with a topology constraint lands whole in one zone: the one with room for all its members,
// although the first members' cycles may start before any choice (depth 16). A gang no single zone
// has room for stays wholly pending, saying so.
struct topology_env {
  pipeline_env env;
  std::shared_ptr<cluster_objects> objs = std::make_shared<cluster_objects>();
  void zone(const std::string& z, int nodes) {
    for (int i = 0; i < nodes; ++i) {
      node_spec n = node(z + "-" + std::to_string(i), "4", "8Gi");
      n.labels = {{"topology.kubernetes.io/zone", z}};
      env.add_node(make_node(n));
    }
  }
  void gang(const std::string& name, int size, const std::string& cpu) {
    auto g = std::make_shared<pod_group>();
    g->api = pod_group_api::coscheduling;
    g->ns = "default";
    g->name = name;
    g->gang = true;
    g->min_count = size;
    g->topology_keys = {"topology.kubernetes.io/zone"};
    objs->pod_groups[pod_group_key(*g)] = g;
    for (int i = 0; i < size; ++i) {
      pod_spec ps = pod(name + "-" + std::to_string(i), cpu, "1Gi");
      ps.labels = {{coscheduling_pod_group_label, name}};
      env.add_pod(make_pod(ps));
    }
  }
  bool run(uint32_t depth) {
    caf::anon_send(env.cluster(), create_atom::value, cluster_objects_ptr(objs));
    scheduler_options opts;
    opts.skip_idle_backoff = true;
    opts.runtime.pipeline_depth = depth;
    return env.start(opts) && env.wait_quiescent();
  }
};

class GangTopologyTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GangTopologyTest, AGangLandsWholeInTheZoneWithRoomForIt) {
  topology_env t;
  t.zone("a", 2);  // room for 4 pods of 2 cpu
  t.zone("b", 4);  // room for 8
  t.zone("c", 1);  // room for 2
  t.gang("train", 8, "2");
  ASSERT_TRUE(t.run(GetParam()));
  t.env.expect_invariants();
  EXPECT_EQ(t.env.permit_gangs(), 0u) << "the gang bound: the permit coordinator forgot it";
  auto outs = t.env.outcomes();
  EXPECT_EQ(count_status(outs, "Scheduled"), 8u);
  for (auto& [uid, o] : outs) {
    if (o.status == "Scheduled") {
      EXPECT_EQ(o.node.substr(0, 2), "b-") << o.name << " on " << o.node;
    }
  }
}

TEST_P(GangTopologyTest, AGangNoSingleZoneFitsStaysWhollyPending) {
  topology_env t;
  t.zone("a", 2);  // room for 4
  t.zone("b", 2);  // room for 4: 8 fit in the cluster, but in no single zone
  t.gang("train", 8, "2");
  ASSERT_TRUE(t.run(GetParam()));
  t.env.expect_invariants();
  auto outs = t.env.outcomes();
  EXPECT_EQ(count_status(outs, "Scheduled"), 0u);
  EXPECT_EQ(t.env.permit_gangs(), 0u) << "the gang's attempts failed and ended: the permit coordinator forgot it";
  size_t says_so = 0;
  for (auto& [uid, o] : outs) {
    EXPECT_NE(o.message.find("pod group default/train"), std::string::npos) << o.name << ": " << o.message;
    says_so += o.message.find("no single topology.kubernetes.io/zone domain has room for 8 members") != std::string::npos;
  }
  EXPECT_GT(says_so, 0u);
}

INSTANTIATE_TEST_SUITE_P(Depth, GangTopologyTest, ::testing::Values(1u, 16u),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return "depth" + std::to_string(i.param); });

// --- fault injection: a flaky binder -------------------------------------------------------------

// Fails every `period`-th bind with an Error and Skips otherwise, so DefaultBinder binds the rest.
class flaky_binder : public fw::bind_plugin {
public:
  static constexpr std::string_view plugin_name = "FlakyBinder";
  struct record {
    std::mutex mu;
    uint64_t calls = 0;
    std::set<std::string> failed;  // uids whose bind was failed at least once
  };
  flaky_binder(std::shared_ptr<record> r, uint64_t period) : rec_(std::move(r)), period_(period) {}
  std::string_view name() const override { return plugin_name; }
  fw::status bind(const fw::cycle_state&, const pod_info& pod, const std::string&, fw::bind_callback) const override {
    std::lock_guard<std::mutex> lock(rec_->mu);
    if (++rec_->calls % period_ != 0) return fw::status::skip();
    rec_->failed.insert(pod.uid);
    return fw::status::error("injected bind failure");
  }

private:
  std::shared_ptr<record> rec_;
  uint64_t period_;
};

TEST(PipelineTest, FailedBindsAreRetriedWithoutDoubleCounting) {
  auto rec = std::make_shared<flaky_binder::record>();
  auto reg = fw::in_tree_registry();
  ASSERT_TRUE(reg.add(flaky_binder::plugin_name, [rec](const YAML::Node&, const std::string&, const fw::handle&) {
                   return result<std::shared_ptr<fw::plugin>>(std::make_shared<flaky_binder>(rec, 3));
                 }).ok());
  auto prof = default_profile();
  prof.bind.insert(prof.bind.begin(), std::string(flaky_binder::plugin_name));

  pipeline_env env;
  // Tight: 10 nodes x 4 cpu, 40 pods x 1 cpu fill them exactly; a double-counted (or leaked) assumed
  // pod would leave a pod Unschedulable, a missing one would overcommit.
  for (int i = 0; i < 10; ++i) env.add_node(make_node(node("n" + std::to_string(i), "4", "8Gi")));
  for (int i = 0; i < 40; ++i) env.add_pod(make_pod(pod("p" + std::to_string(i), "1", "1Gi")));
  scheduler_options opts;
  opts.profiles = {prof};
  opts.registry = &reg;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = 4;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();

  auto outs = env.outcomes();
  EXPECT_EQ(count_status(outs, "Scheduled"), 40u);
  for (auto& [uid, o] : outs)
    if (o.status != "Scheduled") ADD_FAILURE() << uid << " " << o.status << " after " << o.attempts << ": " << o.message;
  std::lock_guard<std::mutex> lock(rec->mu);
  EXPECT_FALSE(rec->failed.empty());
  for (auto& uid : rec->failed) EXPECT_GT(outs[uid].attempts, 1) << uid << " failed a bind but was not retried";
}

TEST(PipelineTest, ABindThatAlwaysFailsEndsAsAnErrorInsteadOfLooping) {
  auto rec = std::make_shared<flaky_binder::record>();
  auto reg = fw::in_tree_registry();
  ASSERT_TRUE(reg.add(flaky_binder::plugin_name, [rec](const YAML::Node&, const std::string&, const fw::handle&) {
                   return result<std::shared_ptr<fw::plugin>>(std::make_shared<flaky_binder>(rec, 1));
                 }).ok());
  auto prof = default_profile();
  prof.bind.insert(prof.bind.begin(), std::string(flaky_binder::plugin_name));
  pipeline_env env;
  env.add_node(make_node(node("n1", "4", "8Gi")));
  env.add_pod(make_pod(pod("p1", "1", "1Gi")));
  scheduler_options opts;
  opts.profiles = {prof};
  opts.registry = &reg;
  opts.skip_idle_backoff = true;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  auto outs = env.outcomes();
  EXPECT_EQ(outs["p1"].status, "Error");
  EXPECT_EQ(outs["p1"].message, "Binding rejected: injected bind failure");
  EXPECT_EQ(outs["p1"].attempts, 8);  // scheduling_queue_options::idle_retry_limit
  EXPECT_EQ(env.stats().bound, 0u);
  env.expect_invariants();
}

// --- Permit ---------------------------------------------------------------------------------------

// Returns Wait with `timeout`, and tells `notify` which pod waits (from the driver's thread).
class waiting_permit : public fw::permit_plugin {
public:
  static constexpr std::string_view plugin_name = "TestWaitingPermit";
  using notify_fn = std::function<void(const std::string& uid)>;
  waiting_permit(std::chrono::milliseconds timeout, notify_fn notify) : timeout_(timeout), notify_(std::move(notify)) {}
  std::string_view name() const override { return plugin_name; }
  fw::status permit(fw::cycle_state&, const pod_info& pod, const std::string&,
                    std::chrono::milliseconds& timeout) const override {
    timeout = timeout_;
    if (notify_) notify_(pod.uid);
    return fw::status(fw::code::wait);
  }

private:
  std::chrono::milliseconds timeout_;
  notify_fn notify_;
};

profile_config with_permit(profile_config p) {
  p.permit.push_back(std::string(waiting_permit::plugin_name));
  return p;
}

TEST(PipelineTest, PermitWaitTimesOut) {
  auto reg = fw::in_tree_registry();
  ASSERT_TRUE(reg.add(waiting_permit::plugin_name, [](const YAML::Node&, const std::string&, const fw::handle&) {
                   return result<std::shared_ptr<fw::plugin>>(std::make_shared<waiting_permit>(50ms, nullptr));
                 }).ok());
  pipeline_env env;
  env.add_node(make_node(node("n1", "1", "1Gi")));
  env.add_pod(make_pod(pod("p1", "1", "1Gi")));
  scheduler_options opts;
  opts.profiles = {with_permit(default_profile())};
  opts.registry = &reg;
  opts.skip_idle_backoff = true;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  auto outs = env.outcomes();
  EXPECT_EQ(outs["p1"].status, "Unschedulable");
  EXPECT_NE(outs["p1"].message.find("rejected due to timeout"), std::string::npos) << outs["p1"].message;
  EXPECT_NE(outs["p1"].message.find(waiting_permit::plugin_name), std::string::npos) << outs["p1"].message;
  env.expect_invariants();
  EXPECT_EQ(env.stats().bound, 0u);
}

// An actor that allows waiting pods from outside the scheduling cycle (as a gang plugin's
// controller would). An Allow that overtakes the pod's arrival at the permit coordinator is a no-op
// (kube's GetWaitingPod returns nil then), so it re-sends on a timer until told the pod is done.
using allower_actor = caf::typed_actor<caf::reacts_to<allow_atom, std::string, int>>;

allower_actor::behavior_type allower(allower_actor::pointer self, std::shared_ptr<std::atomic<fw::waiting_pods*>> waiting,
                                     std::shared_ptr<std::atomic<bool>> stop) {
  return {
    [=](allow_atom, const std::string& uid, int left) {
      if (stop->load()) return;
      if (auto* w = waiting->load()) w->allow(uid, waiting_permit::plugin_name);
      if (left > 0) self->delayed_send(self, 10ms, allow_atom::value, uid, left - 1);
    },
  };
}

TEST(PipelineTest, PermitWaitAllowedByAnotherActor) {
  auto waiting = std::make_shared<std::atomic<fw::waiting_pods*>>(nullptr);
  auto stop = std::make_shared<std::atomic<bool>>(false);
  pipeline_env env;
  auto helper = env.sys().spawn(allower, waiting, stop);
  auto reg = fw::in_tree_registry();
  ASSERT_TRUE(reg.add(waiting_permit::plugin_name, [=](const YAML::Node&, const std::string&, const fw::handle& h) {
                   waiting->store(h.waiting);
                   auto notify = [helper](const std::string& uid) { caf::anon_send(helper, allow_atom::value, uid, 500); };
                   return result<std::shared_ptr<fw::plugin>>(std::make_shared<waiting_permit>(30s, notify));
                 }).ok());
  env.add_node(make_node(node("n1", "4", "4Gi")));
  for (int i = 0; i < 3; ++i) env.add_pod(make_pod(pod("p" + std::to_string(i), "1", "1Gi")));
  scheduler_options opts;
  opts.profiles = {with_permit(default_profile())};
  opts.registry = &reg;
  opts.skip_idle_backoff = true;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  stop->store(true);
  auto outs = env.outcomes();
  for (auto& p : env.pending()) {
    EXPECT_EQ(outs[p->uid].status, "Scheduled") << p->name << ": " << outs[p->uid].message;
    EXPECT_EQ(outs[p->uid].attempts, 1) << p->name;
  }
  env.expect_invariants();
  caf::anon_send_exit(helper, caf::exit_reason::user_shutdown);
}

// --- a node deleted mid-run ------------------------------------------------------------------------

using probe_actor = caf::typed_actor<caf::reacts_to<event_atom, cluster_change_batch_ptr>,
                                     caf::replies_to<stats_atom>::with<probe_report>>;

struct probe_state {
  watch_credit credit;
  std::set<std::string> deleted;
  probe_report report;
};

// Watches the cluster's stream in resourceVersion order and flags a binding to a deleted node.
probe_actor::behavior_type ordering_probe(probe_actor::stateful_pointer<probe_state> self) {
  return {
    [=](event_atom, const cluster_change_batch_ptr& batch) {
      auto& st = self->state;
      for (auto& ch : batch->changes) {
        st.report.events++;
        if (ch->type == cluster_event_type::node_delete) st.deleted.insert(ch->old_node->name);
        if (ch->type == cluster_event_type::node_add) st.deleted.erase(ch->new_node->name);
        if (ch->type == cluster_event_type::pod_update && ch->old_pod->node_name.empty() &&
            !ch->new_pod->node_name.empty() && st.deleted.count(ch->new_pod->node_name))
          st.report.violations.push_back(ch->new_pod->name + " bound to deleted node " + ch->new_pod->node_name);
      }
      st.credit.applied(self, *batch);
    },
    [=](stats_atom) { return self->state.report; },
  };
}

TEST(PipelineTest, NodeDeletedMidRun) {
  pipeline_env env;
  auto probe = env.sys().spawn(ordering_probe);
  caf::anon_send(env.cluster(), watch_atom::value, caf::actor_cast<watcher_actor>(probe));
  for (int i = 0; i < 20; ++i) env.add_node(make_node(node("n" + std::to_string(i), "4", "8Gi")));
  for (int i = 0; i < 300; ++i) env.add_pod(make_pod(pod("p" + std::to_string(i), "500m", "512Mi")));
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = 8;
  ASSERT_TRUE(env.start(opts));
  // One node goes while the scheduler has at most started; two more once binding is under way, so
  // some pods are assumed or being bound on them when they go.
  caf::anon_send(env.cluster(), delete_atom::value, std::string("n3"));
  bool some_bound = false;
  for (int i = 0; i < 200000 && !some_bound; ++i) some_bound = env.stats().bound >= 40;
  EXPECT_TRUE(some_bound);
  for (auto n : {"n11", "n17"}) caf::anon_send(env.cluster(), delete_atom::value, std::string(n));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();

  caf::scoped_actor self{env.sys()};
  probe_report rep;
  self->request(probe, reply_timeout, stats_atom::value)
    .receive([&](const probe_report& r) { rep = r; }, [&](const caf::error& e) { FAIL() << env.sys().render(e); });
  EXPECT_GT(rep.events, 0u);
  for (auto& v : rep.violations) ADD_FAILURE() << v;
  // 17 nodes x 8 pods of 500m remain, plus whatever landed on the deleted nodes before they went.
  auto outs = env.outcomes();
  EXPECT_GE(count_status(outs, "Scheduled"), 17u * 8u);
  EXPECT_EQ(env.stats().nodes, 17u);
  caf::anon_send_exit(probe, caf::exit_reason::user_shutdown);
}

// --- the optimistic conflict path ------------------------------------------------------------------

// Adds `pods` copies of `tmpl` (p0, p1, ...), schedules them eight in flight over two workers, and
// checks the placement invariants and how many were scheduled.
// Schedules what `env` holds eight in flight over two workers, until quiescent, and checks the
// placement invariants.
void schedule_eight_in_flight(pipeline_env& env) {
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = 8;
  opts.runtime.workers = 2;
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();
}

void run_concurrently(pipeline_env& env, const pod_spec& tmpl, size_t pods, size_t want_scheduled) {
  for (size_t i = 0; i < pods; ++i) {
    auto p = tmpl;
    p.name = "p" + std::to_string(i);
    env.add_pod(make_pod(p));
  }
  schedule_eight_in_flight(env);
  if (testing::Test::HasFatalFailure()) return;
  auto outs = env.outcomes();
  EXPECT_EQ(count_status(outs, "Scheduled"), want_scheduled);
  EXPECT_EQ(count_status(outs, "Unschedulable"), pods - want_scheduled);
}

// Eight cycles in flight choosing WaitForFirstConsumer volumes: each of 16 nodes has one local
// volume and 32 pods each bring a claim, so several cycles see the same free volume on snapshots
// from before each other's Reserve. The cache's assumed volumes and the cluster's refusal of a
// second claimRef must leave exactly one pod per volume: 16 scheduled, on 16 different nodes, and
// 16 unschedulable once the volumes are gone.
TEST(PipelineTest, ConcurrentCyclesNeverShareAVolume) {
  constexpr size_t nodes = 16, pods = 32;
  auto decode_to = [](auto& obj, const std::string& yaml) {
    auto st = codec::decode_yaml(yaml, obj);
    ASSERT_TRUE(st.ok()) << st.err().message;
  };
  pipeline_env env;
  auto sc = std::make_shared<k8s::storage::StorageClass>();
  decode_to(*sc, "metadata: {name: local}\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n");
  auto send = [&](volume_change ch) {
    caf::anon_send(env.cluster(), create_atom::value, std::make_shared<const volume_change>(std::move(ch)));
  };
  send(storage_class_change(nullptr, *compile_storage_class(sc)));
  for (size_t i = 0; i < nodes; ++i) {
    std::string n = "n" + std::to_string(i);
    auto spec = node(n, "8", "16Gi");
    spec.labels = {{"kubernetes.io/hostname", n}};
    env.add_node(make_node(spec));
    auto pv = std::make_shared<k8s::core::PersistentVolume>();
    decode_to(*pv, "metadata: {name: pv-" + n + "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], "
                   "storageClassName: local, local: {path: /mnt}, nodeAffinity: {required: {nodeSelectorTerms: "
                   "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [" + n + "]}]}]}}}\n");
    send(pv_change(nullptr, *compile_pv(pv)));
  }
  for (size_t i = 0; i < pods; ++i) {
    std::string name = "p" + std::to_string(i);
    auto claim = std::make_shared<k8s::core::PersistentVolumeClaim>();
    decode_to(*claim, "metadata: {name: data-" + name + ", namespace: default, uid: c" + std::to_string(i) +
                        "}\nspec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: "
                        "{storage: 1Gi}}}\n");
    send(pvc_change(nullptr, *compile_pvc(claim)));
    auto pod = std::make_shared<k8s::core::Pod>();
    decode_to(*pod, "metadata: {name: " + name + ", namespace: default, uid: " + name + "}\nspec: {containers: "
                      "[{name: c, image: i}], volumes: [{name: data, persistentVolumeClaim: {claimName: data-" +
                      name + "}}]}\n");
    env.add_pod(*compile_pod(pod));
  }
  schedule_eight_in_flight(env);
  if (testing::Test::HasFatalFailure()) return;
  auto outs = env.outcomes();
  EXPECT_EQ(count_status(outs, "Scheduled"), nodes);
  EXPECT_EQ(count_status(outs, "Unschedulable"), pods - nodes);
  std::set<std::string> used;
  for (auto& [uid, o] : outs)
    if (o.status == "Scheduled") {
      EXPECT_TRUE(used.insert(o.node).second) << "two pods on " << o.node;
    }
}

TEST(PipelineTest, ConcurrentCyclesNeverOvercommit) {
  struct tc {
    std::string name;
    node_spec node_tmpl;
    pod_spec pod_tmpl;
    size_t nodes, pods, want_scheduled;
  };
  pod_spec ported = pod("", "100m", "64Mi");
  ported.host_ports = {8080};
  std::vector<tc> cases = {
    {"one cpu slot per node", node("", "1", "8Gi"), pod("", "1", "64Mi"), 16, 64, 16},
    {"one host port slot per node", node("", "64", "64Gi"), ported, 16, 64, 16},
    {"one pod slot per node", node("", "64", "64Gi", "1"), pod("", "100m", "64Mi"), 16, 64, 16},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    pipeline_env env;
    for (size_t i = 0; i < c.nodes; ++i) {
      auto n = c.node_tmpl;
      n.name = "n" + std::to_string(i);
      env.add_node(make_node(n));
    }
    run_concurrently(env, c.pod_tmpl, c.pods, c.want_scheduled);
  }
}

// Many preemptors in flight at once over the same victims (PreemptionBasic in small): each of the 16
// full nodes holds four 900m pods of priority 0, and 16 pods of priority 10 asking 3 cpu each need
// three victims apiece. Eight cycles are in flight, so several preemptors run PostFilter on
// snapshots from before each other's nominations; each must still pick its own node. Every
// preemptor ends bound, no victim is evicted twice, and no more victims go than needed (3 each).
// The collision depends on timing, so the scenario runs 32 times (before the fix, about half of
// the runs of 8 rounds failed).
TEST(PipelineTest, ConcurrentPreemptorsShareNoVictims) {
  constexpr size_t nodes = 16;
  for (int round = 0; round < 32; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    pipeline_env env;
    for (size_t i = 0; i < nodes; ++i) env.add_node(make_node(node("n" + std::to_string(i), "4", "16Gi")));
    for (size_t i = 0; i < nodes * 4; ++i) {
      auto low = pod("low" + std::to_string(i), "900m", "64Mi");
      low.node = "n" + std::to_string(i / 4);
      env.add_pod(make_pod(low));
    }
    std::vector<std::string> preemptors;
    for (size_t i = 0; i < nodes; ++i) {
      auto high = pod("high" + std::to_string(i), "3", "64Mi");
      high.priority = 10;
      preemptors.push_back(high.name);
      env.add_pod(make_pod(high));
    }
    schedule_eight_in_flight(env);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    auto outs = env.outcomes();
    for (auto& name : preemptors) EXPECT_EQ(outs[name].status, "Scheduled") << name << ": " << outs[name].message;
    std::map<std::string, int> evictions;  // victim uid -> Preempted events
    for (auto& uid : env.preempted_events()) ++evictions[uid];
    size_t evicted = 0;
    for (auto& [uid, n] : evictions) {
      EXPECT_EQ(n, 1) << uid << " evicted " << n << " times";
      evicted += static_cast<size_t>(n);
    }
    EXPECT_EQ(evicted, nodes * 3) << "victims beyond the three each preemptor needs";
    size_t low_left = 0;
    for (auto& p : env.cluster_pods()) low_left += p->priority == 0;
    EXPECT_EQ(low_left, nodes);
  }
}

// Cross-node constraints with many pods in flight: each reservation is re-validated against what
// the other in-flight pods reserved meanwhile (incrementally, through AddPod/RemovePod, or with a
// new PreFilter), so the counts come out exact.
TEST(PipelineTest, ConcurrentCyclesKeepCrossNodeConstraints) {
  struct tc {
    std::string name;
    pod_spec pod_tmpl;
    size_t want_scheduled;
  };
  pod_spec anti = pod("", "100m", "64Mi");
  anti.labels = {{"app", "web"}};
  anti.anti_affinity_topology_key = "kubernetes.io/hostname";
  pod_spec spread = pod("", "1", "64Mi");
  spread.labels = {{"app", "db"}};
  spread.spread_topology_key = "topology.kubernetes.io/zone";
  spread.max_skew = 1;
  pod_spec zone_anti = anti;
  zone_anti.anti_affinity_topology_key = "topology.kubernetes.io/zone";
  std::vector<tc> cases = {
    // One per node: 16 nodes.
    {"required anti-affinity per hostname", anti, 16},
    // Zone b has 4 one-cpu slots; zone a may then hold at most 5 (skew 1): 9.
    {"DoNotSchedule zone spread, skew 1", spread, 9},
    // One per zone: 2 zones.
    {"required anti-affinity per zone", zone_anti, 2},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    pipeline_env env;
    for (size_t i = 0; i < 16; ++i) {
      auto n = node("n" + std::to_string(i), "1", "8Gi");
      n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", i < 12 ? "a" : "b"}};
      env.add_node(make_node(n));
    }
    run_concurrently(env, c.pod_tmpl, 64, c.want_scheduled);
  }
}

// --- preemption for a gang (issue #16) ------------------------------------------------------------

// Four nodes of 4 cpu, each running a 3-cpu pod of priority 0. A gang of four 3-cpu members
// (priority 100) needs every node: it evicts the four low pods and ends bound whole. A gang of
// five (priority 200, above the first gang) fits in no way, whatever it evicts: nobody is evicted
// for it, and it stays wholly pending, saying so. One pod in flight or many.
class GangPreemptionTest : public ::testing::TestWithParam<uint32_t> {};

// A Coscheduling gang (minMember = size) of pods of 3 CPUs at `priority`, its PodGroup put in
// `objs` and its pods in `env`; returns the members' uids.
std::vector<std::string> add_gang(pipeline_env& env, cluster_objects& objs, const std::string& name, int size,
                                  int32_t priority, std::vector<std::string> topology_keys = {}) {
  auto g = std::make_shared<pod_group>();
  g->api = pod_group_api::coscheduling;
  g->ns = "default";
  g->name = name;
  g->gang = true;
  g->min_count = size;
  g->topology_keys = std::move(topology_keys);
  objs.pod_groups[pod_group_key(*g)] = g;
  std::vector<std::string> members;
  for (int i = 0; i < size; ++i) {
    pod_spec ps = pod(name + "-" + std::to_string(i), "3", "64Mi");
    ps.labels = {{coscheduling_pod_group_label, name}};
    ps.priority = priority;
    auto p = make_pod(ps);
    members.push_back(p->uid);
    env.add_pod(p);
  }
  return members;
}

TEST_P(GangPreemptionTest, AGangPreemptsForAllItsMembersOrNotAtAll) {
  pipeline_env env;
  std::set<std::string> low;
  for (int i = 0; i < 4; ++i) {
    env.add_node(make_node(node("n" + std::to_string(i), "4", "8Gi")));
    auto l = pod("low" + std::to_string(i), "3", "64Mi");
    l.node = "n" + std::to_string(i);
    auto lp = make_pod(l);
    low.insert(lp->uid);
    env.add_pod(lp);
  }
  auto objs = std::make_shared<cluster_objects>();
  std::map<std::string, std::string> gang_of;  // uid -> gang
  auto gang = [&](const std::string& name, int size, int32_t priority) {
    for (auto& uid : add_gang(env, *objs, name, size, priority)) gang_of[uid] = name;
  };
  gang("train", 4, 100);
  gang("huge", 5, 200);
  caf::anon_send(env.cluster(), create_atom::value, cluster_objects_ptr(objs));
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = GetParam();
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();
  auto outs = env.outcomes();
  std::map<std::string, size_t> scheduled;
  for (auto& [uid, g] : gang_of)
    if (outs[uid].status == "Scheduled") ++scheduled[g];
  EXPECT_EQ(scheduled["train"], 4u) << "the gang that fits with preemption ends bound whole";
  EXPECT_EQ(scheduled["huge"], 0u);
  // Only the low pods were evicted (the huge gang evicted nobody, not even the lower-priority
  // train members), each once.
  std::map<std::string, int> evictions;
  for (auto& uid : env.preempted_events()) ++evictions[uid];
  std::set<std::string> evicted;
  for (auto& [uid, n] : evictions) {
    evicted.insert(uid);
    EXPECT_EQ(n, 1) << uid << " evicted " << n << " times";
  }
  EXPECT_EQ(evicted, low);
  for (auto& [uid, g] : gang_of)
    if (g == "huge") {
      EXPECT_EQ(outs[uid].status, "Unschedulable") << outs[uid].name;
      EXPECT_NE(outs[uid].message.find("pod group default/huge"), std::string::npos) << outs[uid].message;
    }
  // The huge gang goes first (the higher priority) while the low pods still run: its member's
  // FailedScheduling says that even evicting them would not make room for five.
  size_t says_so = 0;
  for (auto& e : env.events())
    if (e.reason == "FailedScheduling" && gang_of[e.pod_uid] == "huge")
      says_so += e.message.find("pod group preemption: the pod group's 5 members cannot all fit even with "
                                "preemption") != std::string::npos;
  EXPECT_GT(says_so, 0u) << "the huge gang's members say why";
}

// A gang with a topology constraint preempts in one zone only: zone a's low pod is the cheapest
// victim, but a2 runs a pod above the gang, so only zone b can take both members; b's two low pods
// go and the gang binds whole in zone b, a1's low pod untouched. With one pod in flight the member
// that preempted backs off while the other waits in activeQ: the queue's turn counts members in
// backoff towards the quorum, or it would park both and the gang would wait for an unrelated event.
class GangPreemptionTopologyTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GangPreemptionTopologyTest, ATopologyGangPreemptsInOneZone) {
  pipeline_env env;
  auto zone_node = [&](const std::string& name, const std::string& zone, const std::string& resident, int32_t prio) {
    node_spec n = node(name, "4", "8Gi");
    n.labels = {{"topology.kubernetes.io/zone", zone}};
    env.add_node(make_node(n));
    auto r = pod(resident, "3", "64Mi");
    r.node = name;
    r.priority = prio;
    env.add_pod(make_pod(r));
  };
  zone_node("a1", "a", "low-a1", 5);
  zone_node("a2", "a", "high-a2", 200);
  zone_node("b1", "b", "low-b1", 10);
  zone_node("b2", "b", "low-b2", 10);
  auto objs = std::make_shared<cluster_objects>();
  auto members = add_gang(env, *objs, "train", 2, 100, {"topology.kubernetes.io/zone"});
  caf::anon_send(env.cluster(), create_atom::value, cluster_objects_ptr(objs));
  scheduler_options opts;
  opts.skip_idle_backoff = true;
  opts.runtime.pipeline_depth = GetParam();
  ASSERT_TRUE(env.start(opts));
  ASSERT_TRUE(env.wait_quiescent());
  env.expect_invariants();
  auto outs = env.outcomes();
  for (auto& uid : members) {
    EXPECT_EQ(outs[uid].status, "Scheduled") << outs[uid].name << ": " << outs[uid].message;
    EXPECT_EQ(outs[uid].node.substr(0, 1), "b") << outs[uid].name << " on " << outs[uid].node;
  }
  std::map<std::string, int> evictions;
  for (auto& uid : env.preempted_events()) ++evictions[uid];
  EXPECT_EQ(evictions, (std::map<std::string, int>{{"low-b1", 1}, {"low-b2", 1}}));
}

INSTANTIATE_TEST_SUITE_P(Depth, GangPreemptionTopologyTest, ::testing::Values(1u, 16u),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return "depth" + std::to_string(i.param); });

INSTANTIATE_TEST_SUITE_P(Depth, GangPreemptionTest, ::testing::Values(1u, 16u),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return "depth" + std::to_string(i.param); });

}  // namespace
}  // namespace kas::test
