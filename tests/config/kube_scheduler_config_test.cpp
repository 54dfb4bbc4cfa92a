// KubeSchedulerConfiguration: decoding, validation (each error with its field path), and the
// resolution of plugin sets (multiPoint expansion, disabled "*", weights), against the in-tree
// plugin registry.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <fstream>
#include <string>
#include <vector>

#include "config/runtime_config.hpp"
#include "plugins/framework/runtime/profile_resolver.hpp"

namespace kas {
namespace {

using strings = std::vector<std::string>;

const std::string head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

// Loads `yaml` from a file named cfg.yaml, resolved against the in-tree registry. ctest runs each
// test as its own process, in parallel: the pid keeps their files apart.
result<scheduler_config> load(const std::string& yaml) {
  std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_cfg.yaml";
  std::ofstream(path) << yaml;
  auto r = fw::load_scheduler_config(path, fw::in_tree_registry());
  std::remove(path.c_str());
  if (!r) {
    // Errors are reported relative to the file, so tests compare what follows its name.
    auto& m = r.err().message;
    auto at = m.find("cfg.yaml: ");
    return error{at == std::string::npos ? m : m.substr(at + 10)};
  }
  return r;
}

bool registered(std::string_view name) { return fw::in_tree_registry().find(name) != nullptr; }

// The default lists restricted to registered plugins: what kube's defaults give for `point`.
strings default_list(ext_point point) { return point_list(default_profile(), point); }

TEST(KubeSchedulerConfig, ValidationErrors) {
  const std::string doc1 = "document 1: ";
  struct tc {
    const char* name;
    std::string yaml;
    std::string want;
  } cases[] = {
    {"unknown top-level field", head + "parallelizm: 4\n", doc1 + "parallelizm: unknown field"},
    {"wrong apiVersion", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
     doc1 + "apiVersion: unsupported \"kubescheduler.config.k8s.io/v1beta3\" (want kubescheduler.config.k8s.io/v1)"},
    {"parallelism must be positive", head + "parallelism: 0\n",
     doc1 + "parallelism: Invalid value: 0: should be an integer value greater than zero"},
    {"global percentage out of range", head + "percentageOfNodesToScore: 101\n",
     doc1 + "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
    {"initial backoff must be positive", head + "podInitialBackoffSeconds: 0\n",
     doc1 + "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"},
    {"max backoff below initial", head + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
     doc1 + "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"},
    {"leader election lock", head + "leaderElection: {leaderElect: true, resourceLock: endpoints}\n",
     doc1 + "leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value must be \"leases\""},
    {"unknown leader election field", head + "leaderElection: {leaderElekt: true}\n",
     doc1 + "leaderElection.leaderElekt: unknown field"},
    {"lease duration not a duration", head + "leaderElection: {leaseDuration: 15}\n",
     doc1 + "leaderElection.leaseDuration: Invalid value: \"15\": time: missing unit in duration \"15\""},
    {"retry period zero", head + "leaderElection: {retryPeriod: 0s}\n",
     doc1 + "leaderElection.retryPeriod: Invalid value: \"0s\": must be greater than zero"},
    {"lease not longer than the deadline", head + "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n",
     doc1 + "leaderElection.leaseDuration: Invalid value: \"10s\": LeaseDuration must be greater than RenewDeadline"},
    {"deadline within the jittered retry", head + "leaderElection: {renewDeadline: 2s, retryPeriod: 2s}\n",
     doc1 + "leaderElection.renewDeadline: Invalid value: \"2s\": renewDeadline must be greater than "
            "retryPeriod*JitterFactor (1.2)"},
    {"lease without a name", head + "leaderElection: {resourceName: ''}\n",
     doc1 + "leaderElection.resourceName: Invalid value: \"\": resourceName is required"},
    {"client connection burst", head + "clientConnection: {burst: -1}\n",
     doc1 + "clientConnection.burst: Invalid value: -1: must be non-negative"},
    {"two binding extenders", head + "extenders: [{urlPrefix: a, bindVerb: b}, {urlPrefix: c, bindVerb: d}]\n",
     doc1 + "extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can implement bind"},
    {"unknown profile field", head + "profiles:\n- schedulerName: a\n  plugin: {}\n",
     doc1 + "profiles[0].plugin: unknown field"},
    {"unknown extension point", head + "profiles:\n- plugins: {scoring: {}}\n",
     doc1 + "profiles[0].plugins.scoring: unknown field"},
    {"unknown plugin set field", head + "profiles:\n- plugins: {score: {enable: []}}\n",
     doc1 + "profiles[0].plugins.score.enable: unknown field"},
    {"schedulerName required with several profiles", head + "profiles:\n- schedulerName: a\n- {}\n",
     doc1 + "profiles[1].schedulerName: Required value"},
    {"duplicate profile", head + "profiles:\n- schedulerName: a\n- schedulerName: a\n",
     doc1 + "profiles[1].schedulerName: Duplicate value: \"a\" (also profiles[0].schedulerName)"},
    {"profile percentage out of range", head + "profiles:\n- percentageOfNodesToScore: -1\n",
     doc1 + "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"},
    {"unknown plugin at a point",
     head + "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality}, {name: Foo}]\n",
     doc1 + "profiles[0].plugins.score.enabled[1].name: unknown plugin \"Foo\""},
    {"unknown plugin in multiPoint", head + "profiles:\n- plugins: {multiPoint: {enabled: [{name: Bar}]}}\n",
     doc1 + "profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin \"Bar\""},
    {"plugin does not extend the point", head + "profiles:\n- plugins: {filter: {enabled: [{name: PrioritySort}]}}\n",
     doc1 + "profiles[0].plugins.filter.enabled[0].name: plugin \"PrioritySort\" does not extend filter"},
    {"duplicate enabled plugin at a point",
     head + "profiles:\n- plugins: {score: {enabled: [{name: ImageLocality}, {name: ImageLocality}]}}\n",
     doc1 + "profiles[0].plugins.score.enabled[1].name: Duplicate value: \"ImageLocality\""},
    {"duplicate multiPoint plugin",
     head + "profiles:\n- plugins: {multiPoint: {enabled: [{name: NodeName}, {name: NodeName}]}}\n",
     doc1 + "profiles[0].plugins.multiPoint.enabled[0].name: Duplicate value: \"NodeName\" (already enabled at "
            "filter)"},
    {"negative weight", head + "profiles:\n- plugins: {score: {enabled: [{name: ImageLocality, weight: -2}]}}\n",
     doc1 + "profiles[0].plugins.score.enabled[0].weight: Invalid value: -2: must not be negative"},
    {"weight not an integer", head + "profiles:\n- plugins: {score: {enabled: [{name: ImageLocality, weight: high}]}}\n",
     doc1 + "profiles[0].plugins.score.enabled[0].weight: expected an integer, got \"high\""},
    {"weight beyond int32", head + "profiles:\n- plugins: {score: {enabled: [{name: ImageLocality, weight: 3000000000}]}}\n",
     doc1 + "profiles[0].plugins.score.enabled[0].weight: Invalid value: 3000000000: out of range"},
    {"duplicate pluginConfig",
     head + "profiles:\n- pluginConfig:\n  - {name: NodeResourcesFit}\n  - {name: NodeResourcesFit}\n",
     doc1 + "profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\""},
    {"invalid plugin argument keeps its path",
     head + "profiles:\n- pluginConfig:\n  - {name: ImageLocality}\n  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {type: Packed}}\n",
     doc1 + "profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Packed\": supported values: "
            "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"args of a plugin that is not enabled are still validated",
     head + "profiles:\n- plugins: {multiPoint: {disabled: [{name: NodeResourcesBalancedAllocation}]}}\n"
            "  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: 3}]}\n",
     doc1 + "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 3: must be 1"},
    {"queueSort differs between profiles",
     head + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
            "      enabled: [{name: PrioritySort}]\n      disabled: [{name: '*'}]\n",
     doc1 + "profiles[1].plugins.queueSort: Invalid value: must be the same for all profiles"},
    {"no queue sort plugin", head + "profiles:\n- plugins: {queueSort: {disabled: [{name: '*'}]}}\n",
     doc1 + "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
            "\"default-scheduler\", but got 0"},
    {"no bind plugin", head + "profiles:\n- plugins: {multiPoint: {disabled: [{name: DefaultBinder}]}}\n",
     doc1 + "profiles[0].plugins.bind: at least one bind plugin is needed for profile with scheduler name "
            "\"default-scheduler\""},
    {"two KubeSchedulerConfiguration documents", head + "---\n" + head,
     "document 2: kind: only one KubeSchedulerConfiguration document is allowed"},
  };
  for (auto& c : cases) {
    auto r = load(c.yaml);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.err().message, c.want) << c.name;
  }
}

TEST(KubeSchedulerConfig, NoPluginsSectionGivesTheDefaultProfile) {
  for (const std::string& yaml : {head, head + "profiles:\n- schedulerName: default-scheduler\n"}) {
    auto r = load(yaml);
    ASSERT_TRUE(r) << r.err().message;
    ASSERT_EQ(r->profiles.size(), 1u);
    const auto& p = r->profiles[0];
    auto want = default_profile();
    EXPECT_EQ(p.scheduler_name, "default-scheduler");
    for (size_t i = 0; i < num_ext_points; ++i)
      EXPECT_EQ(point_list(p, ext_point(i)), point_list(want, ext_point(i))) << ext_point_names[i];
    EXPECT_EQ(p.score_weights, want.score_weights);
  }
}

// A point's plugin set is read through yaml-cpp's map iterator, whose `->` yields a proxy that lives
// for one expression: the set once was a reference into it, read after it was gone (ASan:
// stack-use-after-scope). An empty set changes nothing; a set after it is still read in full.
TEST(KubeSchedulerConfig, PluginSetsReadThroughTheMapIterator) {
  for (const char* point : {"bind", "score", "multiPoint"}) {
    auto r = load(head + "profiles: [{plugins: {" + point + ": {}}}]\n");
    ASSERT_TRUE(r) << point << ": " << r.err().message;
    auto want = default_profile();
    for (size_t i = 0; i < num_ext_points; ++i)
      EXPECT_EQ(point_list(r->profiles[0], ext_point(i)), point_list(want, ext_point(i))) << ext_point_names[i];
  }
  auto r = load(head + "profiles: [{plugins: {bind: {}, score: {disabled: [{name: ImageLocality}]}}}]\n");
  ASSERT_TRUE(r) << r.err().message;
  auto score = point_list(r->profiles[0], ext_point::score);
  EXPECT_EQ(std::find(score.begin(), score.end(), "ImageLocality"), score.end());
  EXPECT_EQ(score.size() + 1, default_list(ext_point::score).size());
}

// The extension points each registered plugin implements agree with default_profile()'s table.
TEST(KubeSchedulerConfig, RegistryPointsMatchTheDefaultProfile) {
  auto reg = fw::in_tree_registry();
  fw::registry_catalog cat(reg);
  auto p = default_profile();
  for (size_t i = 0; i < num_ext_points; ++i)
    for (auto& name : point_list(p, ext_point(i))) {
      auto pts = cat.points(name);
      ASSERT_TRUE(pts) << name;
      EXPECT_TRUE(*pts & (1u << i)) << name << " at " << ext_point_names[i];
    }
}

TEST(KubeSchedulerConfig, MultiPointExpansion) {
  // Expectations are written against default_profile(), so plugins registered later change nothing here.
  auto without = [](strings l, const strings& drop) {
    for (auto& d : drop) l.erase(std::remove(l.begin(), l.end(), d), l.end());
    return l;
  };
  auto front = [&without](const std::string& first, const strings& l) {
    strings out{first};
    for (auto& n : without(l, {first})) out.push_back(n);
    return out;
  };
  auto back = [](strings l, const std::string& last) {
    l.push_back(last);
    return l;
  };
  auto weights = [](std::map<std::string, int32_t> changes) {
    auto w = default_profile().score_weights;
    for (auto& [k, v] : changes) w[k] = v;
    return w;
  };
  const strings score = default_list(ext_point::score);
  struct tc {
    const char* name;
    std::string plugins;  // the profile's plugins: block
    std::vector<std::pair<ext_point, strings>> want;
    std::map<std::string, int32_t> want_weights;  // checked when non-empty
  } cases[] = {
    {"disabling a default in multiPoint removes it everywhere",
     "multiPoint: {disabled: [{name: TaintToleration}]}",
     {{ext_point::filter, without(default_list(ext_point::filter), {"TaintToleration"})},
      {ext_point::score, without(score, {"TaintToleration"})}},
     {}},
    {"disabling at one point keeps the plugin at the others", "score: {disabled: [{name: NodeResourcesFit}]}",
     {{ext_point::score, without(score, {"NodeResourcesFit"})},
      {ext_point::pre_score, default_list(ext_point::pre_score)}},
     {}},
    {"disabled * at a point keeps only that point's explicit plugins",
     "score: {enabled: [{name: ImageLocality, weight: 5}], disabled: [{name: '*'}]}",
     {{ext_point::score, {"ImageLocality"}}, {ext_point::filter, default_list(ext_point::filter)}},
     {{"ImageLocality", 5}}},
    {"disabled * in multiPoint drops every default",
     "multiPoint:\n  enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeResourcesFit, weight: 4}]\n"
     "  disabled: [{name: '*'}]",
     {{ext_point::queue_sort, {"PrioritySort"}}, {ext_point::filter, {"NodeResourcesFit"}},
      {ext_point::score, {"NodeResourcesFit"}}, {ext_point::bind, {"DefaultBinder"}}, {ext_point::pre_enqueue, {}}},
     {{"NodeResourcesFit", 4}}},
    {"an explicit point setting overrides multiPoint and goes first",
     "score: {enabled: [{name: ImageLocality, weight: 7}]}", {{ext_point::score, front("ImageLocality", score)}},
     weights({{"ImageLocality", 7}})},
    {"a re-enabled default keeps its multiPoint position and takes the new weight",
     "multiPoint: {enabled: [{name: TaintToleration, weight: 9}]}", {{ext_point::score, score}},
     weights({{"TaintToleration", 9}})},
    {"an omitted weight is 1, as kube's getScoreWeights makes it",
     "multiPoint: {enabled: [{name: TaintToleration}]}", {}, weights({{"TaintToleration", 1}})},
    {"the score point's weight wins over multiPoint's",
     "multiPoint: {enabled: [{name: NodeAffinity, weight: 8}]}\nscore: {enabled: [{name: NodeAffinity, weight: 6}]}",
     {}, weights({{"NodeAffinity", 6}})},
    {"a plugin enabled at a point only",
     "multiPoint: {disabled: [{name: ImageLocality}]}\nscore: {enabled: [{name: ImageLocality}]}",
     // Not an override of a multiPoint plugin: it comes after the multiPoint ones.
     {{ext_point::score, back(without(score, {"ImageLocality"}), "ImageLocality")},
      {ext_point::pre_score, without(default_list(ext_point::pre_score), {"ImageLocality"})}},
     {}},
  };
  for (auto& c : cases) {
    std::string yaml = head + "profiles:\n- plugins:\n";
    std::string indented = "    ";
    for (char ch : c.plugins) {
      indented += ch;
      if (ch == '\n') indented += "    ";
    }
    auto r = load(yaml + indented + "\n");
    ASSERT_TRUE(r) << c.name << ": " << r.err().message;
    for (auto& [point, want] : c.want)
      EXPECT_EQ(point_list(r->profiles[0], point), want) << c.name << " at " << ext_point_names[size_t(point)];
    if (!c.want_weights.empty()) {
      EXPECT_EQ(r->profiles[0].score_weights, c.want_weights) << c.name;
    }
  }
}

TEST(KubeSchedulerConfig, PercentagesAndBackoff) {
  auto r = load(head + "percentageOfNodesToScore: 30\npodInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\n"
                       "parallelism: 8\nprofiles:\n- schedulerName: a\n- schedulerName: b\n"
                       "  percentageOfNodesToScore: 70\n- schedulerName: c\n  percentageOfNodesToScore: 0\n");
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->profiles.size(), 3u);
  EXPECT_EQ(r->profiles[0].percentage_of_nodes_to_score, std::optional<int32_t>(30));
  EXPECT_EQ(r->profiles[1].percentage_of_nodes_to_score, std::optional<int32_t>(70));
  EXPECT_EQ(r->profiles[2].percentage_of_nodes_to_score, std::optional<int32_t>(0));  // 0 = adaptive
  EXPECT_EQ(r->runtime.pod_initial_backoff, std::chrono::seconds(2));
  EXPECT_EQ(r->runtime.pod_max_backoff, std::chrono::seconds(20));
  EXPECT_EQ(r->kube.parallelism, 8);
}

TEST(KubeSchedulerConfig, AcceptedTopLevelSettings) {
  auto r = load(head + "leaderElection:\n  leaderElect: true\n  leaseDuration: 15s\n  resourceLock: leases\n"
                       "  resourceName: kube-scheduler\n  resourceNamespace: kube-system\n"
                       "clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf, qps: 100, burst: 200}\n"
                       "extenders: [{urlPrefix: 'http://x', filterVerb: filter}]\n"
                       "delayCacheUntilActive: true\nenableProfiling: false\nenableContentionProfiling: false\n");
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->kube.leader_election.lease_duration_ns, std::chrono::seconds(15));
  EXPECT_EQ(r->kube.leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(r->kube.client_connection.burst, 200);
  EXPECT_TRUE(r->kube.delay_cache_until_active);
  EXPECT_FALSE(r->kube.enable_profiling);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("extenders"), std::string::npos);
}

// A profile as a real kube-scheduler deployment carries it: bin-packing through multiPoint, some
// defaults disabled, NodeResourcesFit MostAllocated and PodTopologySpread List defaults.
TEST(KubeSchedulerConfig, RealDeploymentProfile) {
  const std::string yaml = head + R"(leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 10
      disabled:
      - name: NodeResourcesBalancedAllocation
      - name: ImageLocality
    score:
      disabled:
      - name: TaintToleration
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
)";
  auto r = load(yaml);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->profiles.size(), 2u);
  const auto& bp = r->profiles[1];
  EXPECT_EQ(bp.scheduler_name, "bin-packing-scheduler");
  EXPECT_EQ(bp.percentage_of_nodes_to_score, std::optional<int32_t>(50));
  strings want_score;
  for (auto& n : default_list(ext_point::score))
    if (n != "TaintToleration" && n != "NodeResourcesBalancedAllocation" && n != "ImageLocality")
      want_score.push_back(n);
  EXPECT_EQ(bp.score, want_score);
  EXPECT_EQ(bp.score_weights.at("NodeResourcesFit"), 10);
  EXPECT_EQ(bp.filter, default_list(ext_point::filter));  // TaintToleration still filters
  ASSERT_TRUE(bp.plugin_args.count("NodeResourcesFit"));
  EXPECT_EQ(bp.plugin_args.at("NodeResourcesFit")["scoringStrategy"]["type"].as<std::string>(), "MostAllocated");
  EXPECT_NE(bp.plugin_args_path.at("NodeResourcesFit").find("profiles[1].pluginConfig[0].args"), std::string::npos);
  EXPECT_TRUE(r->profiles[0].plugin_args.empty());
  // PodTopologySpread is written in parallel: once registered, its List defaults are accepted,
  // passed on and the plugin runs at its default points with weight 2.
  if (registered("PodTopologySpread")) {
    ASSERT_TRUE(bp.plugin_args.count("PodTopologySpread"));
    EXPECT_EQ(bp.plugin_args.at("PodTopologySpread")["defaultingType"].as<std::string>(), "List");
    EXPECT_EQ(bp.score_weights.at("PodTopologySpread"), 2);
    auto bad = load(yaml + "      - maxSkew: 0\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.err().message.find("profiles[1].pluginConfig[1].args.defaultConstraints[1]"), std::string::npos)
      << bad.err().message;
  } else {
    EXPECT_FALSE(bp.plugin_args.count("PodTopologySpread"));  // args of unknown plugins are ignored
  }
}

}  // namespace
}  // namespace kas
