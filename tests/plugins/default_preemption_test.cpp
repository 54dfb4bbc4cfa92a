// DefaultPreemption: eligibility, victim selection (reprieve order, PDBs), the choice among
// candidates, the candidate-count bounds, the messages and the evictions. Cases follow kube's
// defaultpreemption/default_preemption_test.go and preemption/preemption_test.go, run through a
// real framework (NodeResourcesFit, TaintToleration) so Filter and the PreFilter extensions are
// the profile's own.
#include <gtest/gtest.h>

#include <algorithm>

#include "plugins/default_preemption/default_preemption.hpp"
#include "plugins/framework/runtime/framework.hpp"
#include "plugins/framework/groups.hpp"
#include "plugins/framework/registry.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_with_allocatable;
using test::pod_from_yaml;

// Records what the plugin asks of the cluster.
struct fake_client final : fw::cluster_client {
  std::vector<std::string> calls;
  void bind(const pod_info&, const std::string&, std::function<void(fw::status)>) override {}
  void delete_pod(const pod_info& pod, const std::string& reason, std::function<void(fw::status)> done) override {
    calls.push_back("delete " + pod.name + ": " + reason);
    done(fw::status::ok());
  }
  void set_nominated_node(const pod_info& pod, const std::string& node,
                          std::function<void(fw::status)> done) override {
    calls.push_back("nominate " + pod.name + " -> " + (node.empty() ? "<none>" : node));
    done(fw::status::ok());
  }
};

// A pod with a cpu request, a priority and optional extra metadata/spec lines.
pod_info_ptr pod(const std::string& name, const std::string& cpu, int priority, const std::string& extra_meta = "",
                 const std::string& extra_spec = "", const std::string& status = "") {
  std::string y = "metadata: {name: " + name + ", namespace: default, uid: " + name + extra_meta + "}\n" +
                  "spec:\n  priority: " + std::to_string(priority) + "\n" + extra_spec +
                  "  containers: [{name: c, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" + status;
  return pod_from_yaml(y);
}

pod_info_ptr started(const std::string& name, const std::string& cpu, int priority, const std::string& when) {
  return pod(name, cpu, priority, "", "", "status: {startTime: \"" + when + "\"}\n");
}

std::shared_ptr<node_info> node(const std::string& name, const std::string& cpu, std::vector<pod_info_ptr> pods,
                                const std::string& taint = "") {
  auto n = node_with_allocatable(name, cpu, "100Gi", "110", pods);
  if (!taint.empty()) n->taints.push_back({taint, "", taint_effect::no_schedule});
  return n;
}

disruption_budget pdb(const std::string& app, int32_t allowed, std::vector<std::string> disrupted = {}) {
  disruption_budget b;
  b.ns = "default";
  b.name = "pdb-" + app;
  b.selector.requirements.push_back({"app", selector_op::in, {app}});
  b.disruptions_allowed = allowed;
  b.disrupted_pods = std::move(disrupted);
  return b;
}

struct harness {
  fake_client client;
  std::shared_ptr<fw::framework> fwk;
  snapshot snap;

  explicit harness(const std::string& args_yaml = "") {
    profile_config p;
    p.queue_sort = {"PrioritySort"};
    p.pre_filter = {"NodeResourcesFit"};
    p.filter = {"TaintToleration", "NodeResourcesFit"};
    p.post_filter = {"DefaultPreemption"};
    p.bind = {"DefaultBinder"};
    if (!args_yaml.empty()) p.plugin_args["DefaultPreemption"] = YAML::Load(args_yaml);
    fw::handle h;
    h.client = fw::unowned_client(&client);
    auto f = fw::framework::build(p, fw::in_tree_registry(), h, "profiles[0]");
    if (!f) throw std::runtime_error(f.err().message);
    fwk = *f;
  }
  void set_nodes(const std::vector<std::shared_ptr<node_info>>& nodes, std::vector<disruption_budget> pdbs = {}) {
    uint64_t gen = 0;
    for (auto& n : nodes) snap = snap.with_added_node(n, ++gen);
    auto objs = std::make_shared<cluster_objects>();
    objs->pdbs = std::move(pdbs);
    snap = snap.with_objects(objs, ++gen);
  }
  // One scheduling attempt up to PostFilter; returns the FailedScheduling message.
  std::string attempt(const pod_info& p, fw::post_filter_result& out, fw::status& post) {
    fw::cycle_state state;
    fw::pre_filter_result pr;
    auto s = fwk->run_pre_filter(state, p, snap, pr);
    EXPECT_TRUE(s.is_success()) << s.message();
    fw::node_to_status statuses;
    for (size_t i = 0; i < snap.size(); ++i) {
      auto fs = fwk->run_filter_with_nominated_pods(state, p, snap.node(i), snap);
      if (!fs.is_success()) statuses.statuses.emplace(snap.node(i).name, fs);
    }
    EXPECT_EQ(statuses.statuses.size(), snap.size()) << "the pod fits somewhere without preemption";
    post = fwk->run_post_filter(state, p, snap, statuses, out);
    return fw::fit_error_message(snap.size(), statuses, "", post.is_success() ? "" : post.message());
  }
};

std::vector<std::string> names(const std::vector<pod_info_ptr>& pods) {
  std::vector<std::string> out;
  for (auto& p : pods) out.push_back(p->name);
  return out;
}

TEST(DefaultPreemption, PostFilter) {
  struct tc {
    const char* name;
    std::vector<std::shared_ptr<node_info>> nodes;
    std::vector<disruption_budget> pdbs;
    pod_info_ptr preemptor;
    bool want_success;
    std::string want_node;
    std::vector<std::string> want_victims;
    std::string want_message;  // the FailedScheduling message
  };
  std::vector<tc> cases = {
    {"pod with preemptionPolicy Never is not eligible",
     {node("n1", "4", {pod("low", "3", 0)})}, {},
     pod("p", "2", 100, "", "  preemptionPolicy: Never\n"), false, "", {},
     "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."},
    {"no lower-priority pods: no victims anywhere",
     {node("n1", "4", {pod("a", "3", 100)}), node("n2", "4", {pod("b", "3", 200)})}, {},
     pod("p", "2", 100), false, "", {},
     "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims "
     "found for incoming pod."},
    {"pod does not fit even without every lower-priority pod",
     {node("n1", "4", {pod("a", "1", 0), pod("hi-a", "2", 200)}),
      node("n2", "4", {pod("b", "1", 0), pod("hi-b", "2", 200)})},
     {}, pod("p", "3", 100), false, "", {},
     "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Insufficient cpu."},
    {"request above allocatable is unresolvable: preemption cannot help",
     {node("n1", "4", {pod("a", "3", 0)}), node("n2", "4", {pod("b", "3", 0)})}, {},
     pod("p", "5", 100), false, "", {},
     "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not "
     "helpful for scheduling."},
    {"unresolvable nodes are not helpful",
     {node("n1", "4", {pod("a", "3", 0)}, "dedicated"), node("n2", "4", {pod("b", "3", 100)})}, {},
     pod("p", "2", 100), false, "", {},
     "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are "
     "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."},
    {"every node unresolvable",
     {node("n1", "4", {pod("a", "3", 0)}, "dedicated")}, {},
     pod("p", "2", 100), false, "", {},
     "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 "
     "Preemption is not helpful for scheduling."},
    {"lowest highest-priority victim wins",
     {node("n1", "4", {pod("a", "3", 10)}), node("n2", "4", {pod("b", "3", 5)})}, {},
     pod("p", "2", 100), true, "n2", {"b"}, "0/2 nodes are available: 2 Insufficient cpu."},
    {"reprieve the most important pods first",
     {node("n1", "4", {pod("l1", "1", 1), pod("l3", "1", 3), pod("l2", "1", 2), pod("hi", "1", 200)})}, {},
     pod("p", "2", 100), true, "n1", {"l2", "l1"}, "0/1 nodes are available: 1 Insufficient cpu."},
    {"fewest PDB violations beats lower priority",
     {node("n1", "4", {pod("db", "3", 1, ", labels: {app: db}")}), node("n2", "4", {pod("web", "3", 50)})},
     {pdb("db", 0)}, pod("p", "2", 100), true, "n2", {"web"}, "0/2 nodes are available: 2 Insufficient cpu."},
    {"PDB with room is no violation",
     {node("n1", "4", {pod("db", "3", 1, ", labels: {app: db}")}), node("n2", "4", {pod("web", "3", 50)})},
     {pdb("db", 1)}, pod("p", "2", 100), true, "n1", {"db"}, "0/2 nodes are available: 2 Insufficient cpu."},
    {"smallest priority sum",
     {node("n1", "4", {pod("a1", "2", 5), pod("a2", "2", 5)}), node("n2", "4", {pod("b1", "3", 5)})}, {},
     pod("p", "3", 100), true, "n2", {"b1"}, "0/2 nodes are available: 2 Insufficient cpu."},
    {"latest start time of the highest-priority victims",
     {node("n1", "4", {started("old", "3", 5, "2024-01-01T00:00:00Z")}),
      node("n2", "4", {started("new", "3", 5, "2024-06-01T00:00:00Z")})},
     {}, pod("p", "2", 100), true, "n2", {"new"}, "0/2 nodes are available: 2 Insufficient cpu."},
  };
  for (auto& c : cases) {
    harness h;
    h.set_nodes(c.nodes, c.pdbs);
    fw::post_filter_result out;
    fw::status post;
    auto msg = h.attempt(*c.preemptor, out, post);
    EXPECT_EQ(post.is_success(), c.want_success) << c.name << ": " << post.message();
    EXPECT_EQ(out.nominated_node_name, c.want_node) << c.name;
    EXPECT_EQ(names(out.victims), c.want_victims) << c.name;
    EXPECT_EQ(msg, c.want_message) << c.name;
  }
}

TEST(DefaultPreemption, EvictsVictimsAndNominates) {
  harness h;
  auto n1 = node("n1", "4", {pod("v1", "2", 1), pod("v2", "2", 2)});
  h.set_nodes({n1});
  // A lower-priority pod nominated to n1 loses its nomination; a higher-priority one keeps it.
  auto waiting_low = pod("waiting-low", "1", 50, "", "", "status: {nominatedNodeName: n1}\n");
  auto waiting_high = pod("waiting-high", "1", 500, "", "", "status: {nominatedNodeName: n1}\n");
  auto nominated = std::make_shared<snapshot::nominated_map>();
  (*nominated)["n1"] = {waiting_low, waiting_high};
  h.snap = h.snap.with_nominated(nominated, 99);
  fw::post_filter_result out;
  fw::status post;
  // 4 cpu: v1 2 + v2 2 (+ waiting-high 1, nominated with a higher priority); p needs 2 and
  // neither victim can be reprieved next to waiting-high.
  h.attempt(*pod("p", "2", 100), out, post);
  ASSERT_TRUE(post.is_success()) << post.message();
  EXPECT_EQ(out.nominated_node_name, "n1");
  EXPECT_EQ(names(out.victims), (std::vector<std::string>{"v2", "v1"}));
  EXPECT_EQ(h.client.calls, (std::vector<std::string>{
                              "nominate p -> n1",
                              "nominate waiting-low -> <none>",
                              "delete v2: Preempted by pod p on node n1",
                              "delete v1: Preempted by pod p on node n1",
                            }));
}

TEST(DefaultPreemption, OriginalStateAndNodeUntouched) {
  harness h;
  auto n1 = node("n1", "4", {pod("a", "3", 0)});
  h.set_nodes({n1});
  fw::post_filter_result out;
  fw::status post;
  h.attempt(*pod("p", "2", 100), out, post);
  ASSERT_TRUE(post.is_success());
  EXPECT_EQ(h.snap.node(0).pods.size(), 1u);
  EXPECT_EQ(h.snap.node(0).requested.milli_cpu, 3000);
}

TEST(DefaultPreemption, CalculateNumCandidates) {
  struct tc {
    const char* name;
    std::string args;
    int32_t nodes;
    int32_t want;
  };
  std::vector<tc> cases = {
    {"no nodes", "", 0, 0},
    {"nodes < minCandidateNodesAbsolute", "", 10, 10},
    {"nodes = minCandidateNodesAbsolute", "", 100, 100},
    {"nodes > minCandidateNodesAbsolute", "", 1000, 100},
    {"percentage above absolute", "{minCandidateNodesPercentage: 40, minCandidateNodesAbsolute: 100}", 1000, 400},
    {"absolute above percentage", "{minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 500}", 1000, 500},
    {"absolute zero", "{minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 0}", 25, 2},
    {"capped at the node count", "{minCandidateNodesPercentage: 100, minCandidateNodesAbsolute: 5000}", 50, 50},
  };
  for (auto& c : cases) {
    auto args = parse_default_preemption_args(c.args.empty() ? YAML::Node() : YAML::Load(c.args), "args");
    ASSERT_TRUE(args.ok()) << c.name;
    default_preemption pl(*args, fw::handle{});
    EXPECT_EQ(pl.calculate_num_candidates(c.nodes), c.want) << c.name;
  }
}

TEST(DefaultPreemption, DryRunStopsAtNumCandidatesFromTheOffset) {
  harness h;
  std::vector<std::shared_ptr<node_info>> nodes;
  for (auto n : {"n0", "n1", "n2", "n3"}) nodes.push_back(node(n, "4", {pod(std::string("v-") + n, "3", 0)}));
  h.set_nodes(nodes, {});
  auto p = pod("p", "2", 100);
  fw::cycle_state state;
  fw::pre_filter_result pr;
  ASSERT_TRUE(h.fwk->run_pre_filter(state, *p, h.snap, pr).is_success());
  std::vector<const node_info*> potential;
  for (size_t i = 0; i < h.snap.size(); ++i) potential.push_back(&h.snap.node(i));
  default_preemption pl(default_preemption_args{}, fw::handle{});
  struct tc {
    int32_t offset, num;
    std::vector<std::string> want;
  };
  for (auto& c : std::vector<tc>{{0, 1, {"n0"}}, {2, 1, {"n2"}}, {3, 2, {"n3", "n0"}}, {1, 4, {"n1", "n2", "n3", "n0"}}}) {
    auto dr = pl.dry_run_preemption(state, *p, potential, h.snap, *h.fwk, c.offset, c.num);
    std::vector<std::string> got;
    for (auto& cand : dr.candidates) got.push_back(cand.node);
    EXPECT_EQ(got, c.want) << "offset " << c.offset << " num " << c.num;
  }
  // The offset is reproducible and in range.
  EXPECT_EQ(default_preemption::offset_for(*p, 7), default_preemption::offset_for(*p, 7));
  EXPECT_LT(default_preemption::offset_for(*p, 7), 7);
}

TEST(DefaultPreemption, DryRunKeepsSearchingWhileOnlyViolatingCandidates) {
  harness h;
  h.set_nodes({node("n0", "4", {pod("db", "3", 0, ", labels: {app: db}")}), node("n1", "4", {pod("web", "3", 0)})},
              {pdb("db", 0)});
  auto p = pod("p", "2", 100);
  fw::cycle_state state;
  fw::pre_filter_result pr;
  ASSERT_TRUE(h.fwk->run_pre_filter(state, *p, h.snap, pr).is_success());
  std::vector<const node_info*> potential{&h.snap.node(0), &h.snap.node(1)};
  default_preemption pl(default_preemption_args{}, fw::handle{});
  auto dr = pl.dry_run_preemption(state, *p, potential, h.snap, *h.fwk, 0, 1);
  // A violating candidate alone does not end the search; the list holds num (1) per kind.
  ASSERT_EQ(dr.candidates.size(), 2u);
  EXPECT_EQ(dr.candidates[0].node, "n1");
  EXPECT_EQ(dr.candidates[1].node, "n0");
  EXPECT_EQ(dr.candidates[1].num_pdb_violations, 1);
}

TEST(DefaultPreemption, FilterPodsWithPDBViolation) {
  struct tc {
    const char* name;
    std::vector<pod_info_ptr> pods;
    std::vector<disruption_budget> pdbs;
    std::vector<std::string> violating, non_violating;
  };
  auto a = pod("a", "1", 0, ", labels: {app: db}");
  auto b = pod("b", "1", 0, ", labels: {app: db}");
  auto c = pod("c", "1", 0, ", labels: {app: web}");
  auto bare = pod("bare", "1", 0);
  std::vector<tc> cases = {
    {"no PDBs", {a, b, c}, {}, {}, {"a", "b", "c"}},
    {"budget of one: the second match violates", {a, b, c}, {pdb("db", 1)}, {"b"}, {"a", "c"}},
    {"budget of zero", {a, b}, {pdb("db", 0)}, {"a", "b"}, {}},
    {"disrupted pods are not counted", {a, b}, {pdb("db", 0, {"a"})}, {"b"}, {"a"}},
    {"pods without labels match nothing", {bare}, {pdb("db", 0)}, {}, {"bare"}},
    {"other namespace", {a}, {[] { auto x = pdb("db", 0); x.ns = "other"; return x; }()}, {}, {"a"}},
    {"empty selector matches nothing", {a}, {[] { auto x = pdb("db", 0); x.selector = {}; return x; }()}, {}, {"a"}},
  };
  for (auto& t : cases) {
    auto [v, nv] = filter_pods_with_pdb_violation(t.pods, t.pdbs);
    EXPECT_EQ(names(v), t.violating) << t.name;
    EXPECT_EQ(names(nv), t.non_violating) << t.name;
  }
}

TEST(DefaultPreemption, Args) {
  struct tc {
    const char* name;
    const char* yaml;
    const char* want_error;  // "" = valid
  };
  std::vector<tc> cases = {
    {"defaults", "{}", ""},
    {"valid", "{minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 10}", ""},
    {"percentage above 100", "{minCandidateNodesPercentage: 101}",
     "args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
    {"negative percentage", "{minCandidateNodesPercentage: -1}",
     "args.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"},
    {"negative absolute", "{minCandidateNodesAbsolute: -1}",
     "args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
    {"both zero", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
     "args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
     "minCandidateNodesAbsolute"},
    {"unknown field", "{minCandidates: 1}", "args.minCandidates: unknown field"},
    {"not a number", "{minCandidateNodesAbsolute: many}", "args.minCandidateNodesAbsolute: expected an integer"},
  };
  for (auto& c : cases) {
    auto r = default_preemption::make(YAML::Load(c.yaml), "args", fw::handle{});
    if (std::string(c.want_error).empty()) {
      EXPECT_TRUE(r.ok()) << c.name << ": " << r.err().message;
    } else {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_EQ(r.err().message.rfind(c.want_error, 0), 0u) << c.name << ": " << r.err().message;
    }
  }
}

TEST(DefaultPreemption, TerminatingVictimOnNominatedNodeBlocksPreemption) {
  harness h;
  auto terminating =
    pod("t", "3", 0, ", deletionTimestamp: \"2024-01-01T00:00:00Z\"", "",
        "status: {conditions: [{type: DisruptionTarget, status: \"True\", reason: PreemptionByScheduler}]}\n");
  h.set_nodes({node("n1", "4", {terminating})});
  auto p = pod("p", "2", 100, "", "", "status: {nominatedNodeName: n1}\n");
  fw::post_filter_result out;
  fw::status post;
  auto msg = h.attempt(*p, out, post);
  EXPECT_FALSE(post.is_success());
  EXPECT_EQ(msg, "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on "
                 "the nominated node.");
}

TEST(DefaultPreemption, UnresolvableNominatedNodeAllowsPreemptingAgain) {
  harness h;
  auto terminating =
    pod("t", "3", 0, ", deletionTimestamp: \"2024-01-01T00:00:00Z\"", "",
        "status: {conditions: [{type: DisruptionTarget, status: \"True\", reason: PreemptionByScheduler}]}\n");
  // The nominated node n1 now has an untolerated taint: the terminating victim there no longer
  // blocks, and the pod preempts on n2.
  h.set_nodes({node("n1", "4", {terminating}, "dedicated"), node("n2", "4", {pod("low", "3", 0)})});
  auto p = pod("p", "2", 100, "", "", "status: {nominatedNodeName: n1}\n");
  fw::post_filter_result out;
  fw::status post;
  h.attempt(*p, out, post);
  EXPECT_TRUE(post.is_success()) << post.message();
  EXPECT_EQ(out.nominated_node_name, "n2");
  EXPECT_EQ(names(out.victims), (std::vector<std::string>{"low"}));
}

// --- preemption for a gang (issue #16) ------------------------------------------------------------

// A member of the Coscheduling PodGroup default/train.
pod_info_ptr member(const std::string& name, const std::string& cpu, int priority) {
  return pod(name, cpu, priority, ", labels: {scheduling.x-k8s.io/pod-group: train}");
}

std::shared_ptr<node_info> zone_node(const std::string& name, const std::string& zone, const std::string& cpu,
                                     std::vector<pod_info_ptr> pods) {
  return test::node_from_yaml("metadata: {name: " + name + ", labels: {zone: " + zone +
                                "}}\nstatus:\n  allocatable: {cpu: \"" + cpu + "\", memory: 100Gi, pods: \"110\"}\n",
                              pods);
}

struct gang_harness : harness {
  fw::gang_ticket ticket;
  std::vector<std::string> bound;

  gang_harness(int32_t min_count, std::vector<std::string> topology_keys = {}) {
    profile_config p;
    p.queue_sort = {"PrioritySort"};
    p.pre_filter = {"NodeResourcesFit", "GangScheduling"};
    p.filter = {"TaintToleration", "NodeResourcesFit", "GangScheduling"};
    p.post_filter = {"DefaultPreemption"};
    p.bind = {"DefaultBinder"};
    fw::handle h;
    h.client = fw::unowned_client(&client);
    auto f = fw::framework::build(p, fw::in_tree_registry(), h, "profiles[0]");
    if (!f) throw std::runtime_error(f.err().message);
    fwk = *f;
    auto g = std::make_shared<pod_group>();
    g->api = pod_group_api::coscheduling;
    g->ns = "default";
    g->name = "train";
    g->gang = true;
    g->min_count = min_count;
    g->topology_keys = std::move(topology_keys);
    ticket.group = g;
    ticket.key = pod_group_key(*g);
    ticket.round = 1;
    ticket.members = static_cast<size_t>(min_count);
  }
  // One member's attempt up to PostFilter, as the cycle driver runs it: a PreFilter rejection
  // (GangScheduling's "no single domain") stands for every node.
  std::string attempt(const pod_info& p, fw::post_filter_result& out, fw::status& post) {
    ticket.bound = std::make_shared<const std::vector<std::string>>(bound);
    fw::cycle_state state;
    state.gang = &ticket;
    fw::pre_filter_result pr;
    fw::node_to_status statuses;
    std::string pre_msg;
    auto s = fwk->run_pre_filter(state, p, snap, pr);
    if (s.is_rejected()) {
      statuses.absent = s;
      pre_msg = s.message();
    } else {
      EXPECT_TRUE(s.is_success()) << s.message();
      for (size_t i = 0; i < snap.size(); ++i) {
        auto fs = fwk->run_filter_with_nominated_pods(state, p, snap.node(i), snap);
        if (!fs.is_success()) statuses.statuses.emplace(snap.node(i).name, fs);
      }
      EXPECT_EQ(statuses.statuses.size(), snap.size()) << "the member fits somewhere without preemption";
    }
    post = fwk->run_post_filter(state, p, snap, statuses, out);
    return fw::fit_error_message(snap.size(), statuses, pre_msg, post.is_success() ? "" : post.message());
  }
};

std::vector<std::string> sorted_names(const std::vector<pod_info_ptr>& pods) {
  auto out = names(pods);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DefaultPreemptionGang, WholeGangFitsAfterEvictingTheVictimsOfEveryMember) {
  // Three 4-cpu nodes, each with a 3-cpu pod of priority 0: each member (3 cpu) needs a node of
  // its own, so all three low pods go.
  gang_harness h(3);
  h.set_nodes({node("n1", "4", {pod("low-1", "3", 0)}), node("n2", "4", {pod("low-2", "3", 0)}),
                node("n3", "4", {pod("low-3", "3", 0)})});
  fw::post_filter_result out;
  fw::status post;
  auto msg = h.attempt(*member("m0", "3", 100), out, post);
  ASSERT_TRUE(post.is_success()) << msg;
  EXPECT_EQ(sorted_names(out.victims), (std::vector<std::string>{"low-1", "low-2", "low-3"}));
  ASSERT_FALSE(out.nominated_node_name.empty());
  // This pod is nominated; every victim is deleted, each with the node it leaves.
  ASSERT_EQ(h.client.calls.size(), 4u);
  EXPECT_EQ(h.client.calls[0], "nominate m0 -> " + out.nominated_node_name);
  std::vector<std::string> deletes(h.client.calls.begin() + 1, h.client.calls.end());
  std::sort(deletes.begin(), deletes.end());
  EXPECT_EQ(deletes, (std::vector<std::string>{"delete low-1: Preempted by pod m0 on node n1",
                                               "delete low-2: Preempted by pod m0 on node n2",
                                               "delete low-3: Preempted by pod m0 on node n3"}));
  // The snapshot is left as it was.
  EXPECT_EQ(h.snap.node(0).pods.size(), 1u);
}

TEST(DefaultPreemptionGang, AssumedMembersCountAsFreeAndBoundOnesAsPlaced) {
  // minCount 4: m3 is bound on n4, so three members are still to place. m1 is only assumed on n1
  // (waiting at Permit): it is released when the attempt fails, so n1 takes a member with no
  // victim; the two others need n2's and n3's low pods, and n5's stays.
  gang_harness h(4);
  h.bound = {"m3"};
  h.set_nodes({node("n1", "4", {member("m1", "3", 100)}), node("n2", "4", {pod("low-2", "3", 0)}),
               node("n3", "4", {pod("low-3", "3", 0)}), node("n4", "4", {member("m3", "3", 100)}),
               node("n5", "4", {pod("low-5", "3", 5)})});
  fw::post_filter_result out;
  fw::status post;
  auto msg = h.attempt(*member("m0", "3", 100), out, post);
  ASSERT_TRUE(post.is_success()) << msg;
  EXPECT_EQ(sorted_names(out.victims), (std::vector<std::string>{"low-2", "low-3"}));
  EXPECT_EQ(out.nominated_node_name, "n1");
}

TEST(DefaultPreemptionGang, GangThatCannotFitEvenWithPreemptionEvictsNobody) {
  // Four members of 3 cpu, three nodes: one member per node at most, whatever is evicted.
  gang_harness h(4);
  h.set_nodes({node("n1", "4", {pod("low-1", "3", 0)}), node("n2", "4", {pod("low-2", "3", 0)}),
               node("n3", "4", {pod("low-3", "3", 0)})});
  fw::post_filter_result out;
  fw::status post;
  auto msg = h.attempt(*member("m0", "3", 100), out, post);
  EXPECT_EQ(post.get_code(), fw::code::unschedulable);
  EXPECT_TRUE(out.victims.empty());
  EXPECT_TRUE(out.nominated_node_name.empty());
  EXPECT_TRUE(h.client.calls.empty());
  EXPECT_EQ(msg, "0/3 nodes are available: 3 Insufficient cpu. pod group preemption: the pod group's 4 members "
                 "cannot all fit even with preemption");
}

TEST(DefaultPreemptionGang, TopologyConstrainedGangPreemptsInOneDomainOnly) {
  // Zone a: a1's low pod (priority 5) is the cheapest victim of all, but a2 holds a pod above the
  // gang, so zone a takes one member at most. Zone b takes both, evicting its two priority-10 pods.
  auto cluster = [] {
    return std::vector<std::shared_ptr<node_info>>{
      zone_node("a1", "a", "4", {pod("low-a1", "3", 5)}), zone_node("a2", "a", "4", {pod("high-a2", "3", 200)}),
      zone_node("b1", "b", "4", {pod("low-b1", "3", 10)}), zone_node("b2", "b", "4", {pod("low-b2", "3", 10)})};
  };
  {
    gang_harness h(2, {"zone"});
    h.set_nodes(cluster());
    fw::post_filter_result out;
    fw::status post;
    auto msg = h.attempt(*member("m0", "3", 100), out, post);
    ASSERT_TRUE(post.is_success()) << msg;
    EXPECT_EQ(sorted_names(out.victims), (std::vector<std::string>{"low-b1", "low-b2"}));
    EXPECT_TRUE(out.nominated_node_name == "b1" || out.nominated_node_name == "b2") << out.nominated_node_name;
  }
  {
    // Without the constraint the members may straddle the zones: a1's cheaper pod goes.
    gang_harness h(2);
    h.set_nodes(cluster());
    fw::post_filter_result out;
    fw::status post;
    auto msg = h.attempt(*member("m0", "3", 100), out, post);
    ASSERT_TRUE(post.is_success()) << msg;
    auto v = sorted_names(out.victims);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0], "low-a1");
  }
  {
    // Three members fit in no single zone, even with preemption.
    gang_harness h(3, {"zone"});
    h.set_nodes(cluster());
    fw::post_filter_result out;
    fw::status post;
    auto msg = h.attempt(*member("m0", "3", 100), out, post);
    EXPECT_EQ(post.get_code(), fw::code::unschedulable) << msg;
    EXPECT_TRUE(out.victims.empty());
    EXPECT_TRUE(h.client.calls.empty());
    EXPECT_NE(msg.find("pod group preemption: the pod group's 3 members cannot all fit even with preemption"),
              std::string::npos)
      << msg;
  }
}

TEST(DefaultPreemptionGang, EqualAndHigherPriorityPodsAreNeverVictims) {
  auto cluster = [] {
    return std::vector<std::shared_ptr<node_info>>{node("n1", "4", {pod("equal", "3", 100)}),
                                                   node("n2", "4", {pod("higher", "3", 200)}),
                                                   node("n3", "4", {pod("low", "3", 0)})};
  };
  {
    // Two members: only n3 can be freed.
    gang_harness h(2);
    h.set_nodes(cluster());
    fw::post_filter_result out;
    fw::status post;
    h.attempt(*member("m0", "3", 100), out, post);
    EXPECT_EQ(post.get_code(), fw::code::unschedulable);
    EXPECT_TRUE(out.victims.empty());
    EXPECT_TRUE(h.client.calls.empty());
  }
  {
    // One member: n3's low pod, and nothing else.
    gang_harness h(1);
    h.set_nodes(cluster());
    fw::post_filter_result out;
    fw::status post;
    h.attempt(*member("m0", "3", 100), out, post);
    ASSERT_TRUE(post.is_success());
    EXPECT_EQ(names(out.victims), (std::vector<std::string>{"low"}));
    EXPECT_EQ(out.nominated_node_name, "n3");
  }
  {
    // No lower-priority pod anywhere: upstream's pod group text.
    gang_harness h(2);
    h.set_nodes({node("n1", "4", {pod("equal", "3", 100)}), node("n2", "4", {pod("higher", "3", 200)})});
    fw::post_filter_result out;
    fw::status post;
    auto msg = h.attempt(*member("m0", "3", 100), out, post);
    EXPECT_EQ(msg, "0/2 nodes are available: 2 Insufficient cpu. pod group preemption: No preemption victims found "
                   "for incoming preemptor");
  }
}

TEST(DefaultPreemptionGang, PolicyNeverAndTerminatingVictimsOfAMemberAreNotEligible) {
  {
    gang_harness h(1);
    h.set_nodes({node("n1", "4", {pod("low", "3", 0)})});
    fw::post_filter_result out;
    fw::status post;
    auto p = pod("m0", "3", 100, ", labels: {scheduling.x-k8s.io/pod-group: train}", "  preemptionPolicy: Never\n");
    h.attempt(*p, out, post);
    EXPECT_EQ(post.message(), "pod group preemption: not eligible due to preemptionPolicy=Never.");
  }
  {
    // Another member is nominated to n1, where an earlier preemption's victim is still terminating.
    gang_harness h(2);
    auto terminating = pod("low", "3", 0, ", deletionTimestamp: \"2024-01-01T00:00:00Z\"", "",
                           "status: {conditions: [{type: DisruptionTarget, status: \"True\", reason: "
                           "PreemptionByScheduler}]}\n");
    h.set_nodes({node("n1", "4", {terminating}), node("n2", "4", {pod("low-2", "3", 0)})});
    auto nominated = std::make_shared<snapshot::nominated_map>();
    (*nominated)["n1"] = {member("m1", "3", 100)};
    h.snap = h.snap.with_nominated(nominated, 99);
    fw::post_filter_result out;
    fw::status post;
    h.attempt(*member("m0", "3", 100), out, post);
    EXPECT_EQ(post.message(), "pod group preemption: not eligible due to a terminating pod on the nominated node.");
    EXPECT_TRUE(h.client.calls.empty());
  }
}

}  // namespace
}  // namespace kas::plugins
