#pragma once
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decode, default, validate, and
// resolve each profile's plugin sets into the per-point lists the framework runs.
//
// Two stages, because only the plugin registry knows which extension points a plugin implements
// and config/ must not depend on plugins/:
// 1. decode_kube_scheduler_config: the YAML document -> kube_scheduler_configuration, with every
//    field checked (unknown fields, types, ranges, schedulerName, duplicate pluginConfig, the common
//    queue sort of kube's validateCommonQueueSort). Every error names its field path.
// 2. resolve_profile: one decoded profile + a plugin_catalog -> profile_config. This is kube's
//    mergePlugins (v1 defaults) followed by the framework's per-point plugin lists,
//    expandMultiPointPlugins and getScoreWeights:
//    - multiPoint = upstream default multiPoint list (restricted to plugins the catalog knows) with
//      the custom multiPoint set merged in: a disabled name drops that default ("*" drops all); a
//      custom enabled plugin that is also a default replaces it in place (its weight too); other
//      custom ones are appended in order.
//    - for each extension point: the point's own enabled plugins (each must implement the point,
//      no duplicates). Unless the point disables "*", every multiPoint plugin that implements the
//      point and is not disabled there is added. Order: multiPoint plugins also enabled at the point
//      (in the point's order: the explicit setting overrides), then the other multiPoint plugins,
//      then the rest of the point's plugins. A multiPoint plugin listed twice is an error.
//    - score weights: the first of score.enabled then multiPoint that names a score plugin wins;
//      0 (or no weight) means 1.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/profile.hpp"
#include "messages/result.hpp"

namespace kas {

// Extension points in KubeSchedulerConfiguration order; bit i of a plugin's point mask is point i.
enum class ext_point : uint32_t {
  pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score,
  reserve, permit, pre_bind, bind, post_bind, multi_point
};
inline constexpr size_t num_ext_points = 12;  // without multiPoint
inline constexpr std::array<const char*, num_ext_points + 1> ext_point_names = {
  "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
  "reserve", "permit", "preBind", "bind", "postBind", "multiPoint"};
constexpr uint32_t point_bit(ext_point p) { return 1u << static_cast<uint32_t>(p); }

// The per-point list of a profile_config, by point.
std::vector<std::string>& point_list(profile_config& p, ext_point point);
const std::vector<std::string>& point_list(const profile_config& p, ext_point point);

struct plugin_ref {
  std::string name;
  int32_t weight = 0;
  std::string path;  // "profiles[0].plugins.score.enabled[1]"; empty for upstream defaults
};

struct plugin_set {
  std::vector<plugin_ref> enabled;
  std::vector<plugin_ref> disabled;
  bool disables(std::string_view name) const;
};

struct plugin_config_entry {
  std::string name;
  YAML::Node args;
  std::string path;  // "profiles[0].pluginConfig[1]"
};

struct kube_profile {
  std::string scheduler_name;
  std::string path;  // "profiles[0]"
  std::optional<int32_t> percentage_of_nodes_to_score;
  std::array<plugin_set, num_ext_points + 1> plugins;  // indexed by ext_point
  std::vector<plugin_config_entry> plugin_config;
};

// leaderElection (component-base's LeaderElectionConfiguration). The durations are kept as written
// (for messages) and parsed (Go's duration grammar). One deliberate default differs from
// kube-scheduler: the Lease is kube-system/kube-actor-scheduler, not kube-scheduler, so that this
// scheduler running beside kube-scheduler does not contend for kube-scheduler's Lease (the loser of
// that contest would not schedule at all).
struct leader_election_config {
  bool leader_elect = true;
  std::string lease_duration = "15s", renew_deadline = "10s", retry_period = "2s";
  std::chrono::nanoseconds lease_duration_ns = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline_ns = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period_ns = std::chrono::seconds(2);
  std::string resource_lock = "leases", resource_name = "kube-actor-scheduler", resource_namespace = "kube-system";
};

// Parses the three durations (errors: `leaderElection.leaseDuration: Invalid value: "x": time:
// invalid duration "x"`) and validates the whole as component-base's
// ValidateLeaderElectionConfiguration does, plus client-go's NewLeaderElector checks (renewDeadline
// greater than retryPeriod times the jitter factor 1.2). Checked only when leaderElect is true.
status_or_error resolve_leader_election(leader_election_config& c);

struct client_connection_config {
  std::string kubeconfig, accept_content_types, content_type = "application/vnd.kubernetes.protobuf";
  double qps = 50;
  int32_t burst = 100;
  // Whether the file set them: `run` applies qps/burst only then (kube's 50 QPS would cap binding
  // at 50 pods/s; unset means unlimited here, see README).
  bool qps_set = false, burst_set = false;
};

struct kube_scheduler_configuration {
  int32_t parallelism = 16;
  std::optional<int32_t> percentage_of_nodes_to_score;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  leader_election_config leader_election;
  client_connection_config client_connection;
  size_t extenders = 0;
  bool delay_cache_until_active = false;
  bool enable_profiling = true;
  bool enable_contention_profiling = true;
  std::vector<kube_profile> profiles;  // never empty after decoding
  std::vector<std::string> warnings;   // accepted settings this build does not act on
};

// Decodes one KubeSchedulerConfiguration document; errors read "<where>: <field path>: <what>".
result<kube_scheduler_configuration> decode_kube_scheduler_config(const YAML::Node& doc, const std::string& where);

// What resolution needs to know about plugins (implemented over the registry in plugins/).
class plugin_catalog {
public:
  virtual ~plugin_catalog() = default;
  // The extension points the plugin implements (bits of ext_point), or nullopt for an unknown name.
  virtual std::optional<uint32_t> points(std::string_view name) const = 0;
  // Decodes and validates the plugin's args; errors are prefixed with `path`.
  virtual status_or_error check_args(std::string_view name, const YAML::Node& args, const std::string& path) const;
};

// A catalog of the plugins in default_profile(), with the points they serve there. It cannot check
// args; load_scheduler_config uses it when no registry-backed catalog is given.
const plugin_catalog& default_plugin_catalog();

// kube-scheduler v1.36's default multiPoint plugins (getDefaultPlugins) with their score weights,
// in upstream order, including plugins this build may not register.
struct default_plugin {
  const char* name;
  int32_t weight;
};
const std::vector<default_plugin>& upstream_default_plugins();

// Resolves one decoded profile (stage 2 above). `global_percentage` is the top-level
// percentageOfNodesToScore, used when the profile sets none.
result<profile_config> resolve_profile(const kube_profile& profile, const plugin_catalog& catalog,
                                       std::optional<int32_t> global_percentage, const std::string& where);

// Resolves every profile and checks what spans profiles (one queue sort, the same for all).
result<std::vector<profile_config>> resolve_profiles(const kube_scheduler_configuration& cfg,
                                                     const plugin_catalog& catalog, const std::string& where);

}  // namespace kas
