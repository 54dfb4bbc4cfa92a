#include <gtest/gtest.h>

#include <functional>

#include "builders.hpp"

namespace kas {
namespace {

using test::Gi;
using test::Mi;

struct requests_case {
  const char* name;
  std::function<void(k8s::core::PodSpec*)> build;
  resource_list requests;
  resource_list non_zero;
};

resource_list with_eph(resource_list r, int64_t eph) {
  r.ephemeral_storage = eph;
  return r;
}

TEST(CompilePod, Requests) {
  using test::add_container;
  using test::rl;
  const requests_case cases[] = {
      {"regular containers are summed",
       [](auto* s) {
         add_container(s, {{"cpu", "100m"}, {"memory", "1Gi"}});
         add_container(s, {{"cpu", "200m"}, {"memory", "500Mi"}});
       },
       rl(300, Gi + 500 * Mi), rl(300, Gi + 500 * Mi)},
      {"a larger init container dominates",
       [](auto* s) {
         add_container(s, {{"cpu", "1"}});
         add_container(s, {{"cpu", "2"}, {"memory", "1Gi"}}, {}, /*init=*/true);
       },
       rl(2000, Gi), rl(2000, Gi)},
      {"init containers are maxed, not summed",
       [](auto* s) {
         add_container(s, {{"cpu", "500m"}, {"memory", "100Mi"}});
         add_container(s, {{"cpu", "1"}}, {}, true);
         add_container(s, {{"memory", "1Gi"}}, {}, true);
       },
       rl(1000, Gi), rl(1000, Gi)},
      {"sidecars add to the total",
       [](auto* s) {
         add_container(s, {{"cpu", "1"}, {"memory", "1Gi"}});
         add_container(s, {{"cpu", "1"}, {"memory", "1Gi"}}, {}, true, /*sidecar=*/true);
         add_container(s, {{"cpu", "2"}, {"memory", "1Gi"}}, {}, true);
       },
       // total = 1 + 1 (sidecar); init after the sidecar uses 2 + 1 = 3 cpu.
       rl(3000, 2 * Gi), rl(3000, 2 * Gi)},
      {"init container before a sidecar does not see it",
       [](auto* s) {
         add_container(s, {{"cpu", "1"}});
         add_container(s, {{"cpu", "5"}}, {}, true);
         add_container(s, {{"cpu", "1"}}, {}, true, true);
       },
       rl(5000, 0), rl(5000, 400 * Mi)},
      {"sidecars accumulate for later init containers",
       [](auto* s) {
         add_container(s, {{"cpu", "1"}});
         add_container(s, {{"cpu", "1"}}, {}, true, true);
         add_container(s, {{"cpu", "1"}}, {}, true, true);
         add_container(s, {{"cpu", "3"}}, {}, true);
       },
       rl(5000, 0), rl(5000, 600 * Mi)},
      {"overhead is added",
       [](auto* s) {
         add_container(s, {{"cpu", "1"}, {"memory", "1Gi"}});
         test::set_list(s->mutable_overhead(), {{"cpu", "250m"}, {"memory", "120Mi"}});
       },
       rl(1250, Gi + 120 * Mi), rl(1250, Gi + 120 * Mi)},
      {"overhead on top of non-zero defaults",
       [](auto* s) {
         add_container(s, {});
         test::set_list(s->mutable_overhead(), {{"cpu", "250m"}});
       },
       rl(250, 0), rl(350, 200 * Mi)},
      {"limits only: request defaults to the limit",
       [](auto* s) { add_container(s, {}, {{"cpu", "2"}, {"memory", "2Gi"}}); }, rl(2000, 2 * Gi), rl(2000, 2 * Gi)},
      {"limit does not override an explicit request",
       [](auto* s) { add_container(s, {{"cpu", "500m"}}, {{"cpu", "2"}, {"memory", "2Gi"}}); }, rl(500, 2 * Gi),
       rl(500, 2 * Gi)},
      {"no requests: non-zero uses 100m / 200Mi per container",
       [](auto* s) {
         add_container(s, {});
         add_container(s, {{"cpu", "500m"}});
       },
       rl(500, 0), rl(600, 400 * Mi)},
      {"explicit zero is not missing",
       [](auto* s) { add_container(s, {{"cpu", "0"}}); }, rl(0, 0), rl(0, 200 * Mi)},
      {"extended, hugepages, ephemeral; unknown native names dropped",
       [](auto* s) {
         add_container(s, {{"example.com/gpu", "2"}, {"hugepages-2Mi", "4Mi"}, {"ephemeral-storage", "1Gi"},
                           {"foo", "3"}});
         add_container(s, {{"example.com/gpu", "1"}}, {}, true);
       },
       with_eph(rl(0, 0, {{"example.com/gpu", 2}, {"hugepages-2Mi", 4 * Mi}}), Gi),
       with_eph(rl(100, 200 * Mi, {{"example.com/gpu", 2}, {"hugepages-2Mi", 4 * Mi}}), Gi)},
      {"pod-level requests override the container aggregate",
       [](auto* s) {
         add_container(s, {{"cpu", "500m"}});
         test::set_list(s->mutable_resources()->mutable_requests(), {{"cpu", "2"}, {"memory", "1Gi"}});
       },
       rl(2000, Gi), rl(2000, Gi)},
      {"pod-level cpu only: memory still defaults for non-zero",
       [](auto* s) {
         add_container(s, {});
         test::set_list(s->mutable_resources()->mutable_requests(), {{"cpu", "1"}});
       },
       rl(1000, 0), rl(1000, 200 * Mi)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = test::make_pod("p");
    c.build(pod->mutable_spec());
    auto info = test::compile_ok(pod);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->requests, c.requests) << test::describe(info->requests);
    EXPECT_EQ(info->non_zero_requests, c.non_zero) << test::describe(info->non_zero_requests);
  }
}

TEST(CompilePod, BadInputNamesThePath) {
  struct row {
    const char* name;
    std::function<void(k8s::core::PodSpec*)> build;
    std::string want_prefix;
  };
  const row rows[] = {
      {"negative request", [](auto* s) { test::add_container(s, {{"cpu", "-1"}}); },
       "spec.containers[0].resources.requests.cpu: must be greater than or equal to 0"},
      {"negative limit on an init container",
       [](auto* s) {
         test::add_container(s, {});
         test::add_container(s, {}, {{"memory", "-1Gi"}}, true);
       },
       "spec.initContainers[0].resources.limits.memory: must be greater than or equal to 0"},
      {"bad quantity",
       [](auto* s) {
         test::add_container(s, {});
         test::add_container(s, {{"memory", "12xyz"}});
       },
       "spec.containers[1].resources.requests.memory: "},
      {"bad overhead", [](auto* s) { test::set_list(s->mutable_overhead(), {{"cpu", "lots"}}); }, "spec.overhead.cpu: "},
      {"bad toleration operator",
       [](auto* s) { s->add_tolerations()->set_operator_("Sometimes"); }, "spec.tolerations[0].operator: "},
      {"bad toleration effect",
       [](auto* s) {
         s->add_tolerations();
         s->add_tolerations()->set_effect("NoWay");
       },
       "spec.tolerations[1].effect: "},
      {"bad preemption policy", [](auto* s) { s->set_preemption_policy("Always"); }, "spec.preemptionPolicy: "},
      {"empty claim name",
       [](auto* s) {
         auto* v = s->add_volumes();
         v->set_name("data");
         v->mutable_volume_source()->mutable_persistent_volume_claim();
       },
       "spec.volumes[0].persistentVolumeClaim.claimName: Required value"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto pod = test::make_pod("p");
    r.build(pod->mutable_spec());
    auto res = compile_pod(pod);
    ASSERT_FALSE(res.ok());
    EXPECT_EQ(res.err().message.substr(0, r.want_prefix.size()), r.want_prefix) << res.err().message;
  }
}

TEST(CompilePod, MetadataDefaultsAndFields) {
  auto pod = std::make_shared<k8s::core::Pod>();
  pod->mutable_metadata()->set_name("web");
  (*pod->mutable_metadata()->mutable_labels())["app"] = "web";
  pod->mutable_metadata()->mutable_creation_timestamp()->set_seconds(10);
  pod->mutable_metadata()->mutable_creation_timestamp()->set_nanos(5);
  auto* spec = pod->mutable_spec();
  spec->set_priority(7);
  spec->set_preemption_policy("Never");
  spec->set_priority_class_name("high");
  (*spec->mutable_node_selector())["zone"] = "a";
  spec->add_scheduling_gates()->set_name("gate");
  auto* c = test::add_container(spec, {});
  c->set_image("nginx:1.25");
  auto* p1 = c->add_ports();
  p1->set_container_port(80);
  p1->set_host_port(8080);
  auto* p2 = c->add_ports();
  p2->set_container_port(53);
  p2->set_host_port(53);
  p2->set_protocol("UDP");
  p2->set_host_ip("10.0.0.1");
  c->add_ports()->set_container_port(9090);  // no host port: ignored
  auto* init = test::add_container(spec, {}, {}, true, true);
  init->set_image("envoy");
  init->add_ports()->set_host_port(9999);  // a sidecar runs all along: its port counts, listed first
  auto* plain_init = test::add_container(spec, {}, {}, true, false);
  plain_init->add_ports()->set_host_port(7777);  // a plain init container has exited: ignored

  auto info = test::compile_ok(pod);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ns, "default");
  EXPECT_EQ(info->uid, "default/web");
  EXPECT_EQ(info->key(), "default/web");
  EXPECT_EQ(info->scheduler_name, "default-scheduler");
  EXPECT_EQ(info->priority, 7);
  EXPECT_EQ(info->priority_class_name, "high");
  EXPECT_EQ(info->preemption, preemption_policy::never);
  EXPECT_EQ(info->creation_ns, 10000000005);
  ASSERT_NE(info->labels.get("app"), nullptr);
  EXPECT_EQ(*info->node_selector.get("zone"), "a");
  EXPECT_TRUE(info->has_scheduling_gates());
  EXPECT_EQ(info->images, (std::vector<std::string>{"envoy", "nginx:1.25"}));
  ASSERT_EQ(info->host_ports.size(), 3u);
  EXPECT_EQ(info->host_ports[0], (host_port{"TCP", "0.0.0.0", 9999}));
  EXPECT_EQ(info->host_ports[1], (host_port{"TCP", "0.0.0.0", 8080}));
  EXPECT_EQ(info->host_ports[2], (host_port{"UDP", "10.0.0.1", 53}));
  EXPECT_FALSE(info->required_node_affinity.has_value());

  auto bound = with_node_name(*info, "n1");
  EXPECT_EQ(bound->node_name, "n1");
  EXPECT_EQ(info->node_name, "");
}

// The apiserver defaults hostPort to containerPort for a hostNetwork pod (SetDefaults_Pod), in
// containers and init containers; an explicit hostPort is kept.
TEST(CompilePod, HostNetworkDefaultsHostPorts) {
  auto pod = test::make_pod("dns");
  auto* spec = pod->mutable_spec();
  spec->set_host_network(true);
  auto* c = test::add_container(spec, {});
  auto* udp = c->add_ports();
  udp->set_container_port(53);
  udp->set_protocol("UDP");
  auto* fixed = c->add_ports();
  fixed->set_container_port(8080);
  fixed->set_host_port(8080);
  auto* side = test::add_container(spec, {}, {}, true, true);
  side->add_ports()->set_container_port(9100);
  auto info = test::compile_ok(pod);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->host_ports.size(), 3u);
  EXPECT_EQ(info->host_ports[0], (host_port{"TCP", "0.0.0.0", 9100}));
  EXPECT_EQ(info->host_ports[1], (host_port{"UDP", "0.0.0.0", 53}));
  EXPECT_EQ(info->host_ports[2], (host_port{"TCP", "0.0.0.0", 8080}));

  // Without hostNetwork a bare containerPort takes nothing on the host.
  spec->set_host_network(false);
  info = test::compile_ok(pod);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->host_ports.size(), 1u);
  EXPECT_EQ(info->host_ports[0], (host_port{"TCP", "0.0.0.0", 8080}));
}

TEST(CompilePod, NodeAffinity) {
  auto pod = test::make_pod("p", "u1");
  auto* na = pod->mutable_spec()->mutable_affinity()->mutable_node_affinity();
  auto* term = na->mutable_required_during_scheduling_ignored_during_execution()->add_node_selector_terms();
  auto* e = term->add_match_expressions();
  e->set_key("zone");
  e->set_operator_("In");
  e->add_values("a");
  auto* pref = na->add_preferred_during_scheduling_ignored_during_execution();
  pref->set_weight(5);
  auto* pe = pref->mutable_preference()->add_match_expressions();
  pe->set_key("disk");
  pe->set_operator_("Exists");

  auto info = test::compile_ok(pod);
  ASSERT_TRUE(info && info->required_node_affinity);
  EXPECT_EQ(info->uid, "u1");
  EXPECT_TRUE(info->required_node_affinity->matches(test::labels({{"zone", "a"}}), "n"));
  EXPECT_FALSE(info->required_node_affinity->matches(test::labels({{"zone", "b"}}), "n"));
  ASSERT_EQ(info->preferred_node_affinity.size(), 1u);
  EXPECT_EQ(info->preferred_node_affinity[0].weight, 5);
  EXPECT_TRUE(info->preferred_node_affinity[0].preference.matches(test::labels({{"disk", "ssd"}}), "n"));
}

// kube's TestTolerationToleratesTaint (k8s.io/api/core/v1), plus the wildcard rules.
TEST(Toleration, ToleratesTaint) {
  struct row {
    const char* name;
    toleration tol;
    taint t;
    bool want;
  };
  const auto ns = taint_effect::no_schedule;
  const row rows[] = {
      {"same key and effect, Exists, taint has no value", {"foo", true, "", ns}, {"foo", "", ns}, true},
      {"same key and effect, Exists, taint has a value", {"foo", true, "", ns}, {"foo", "bar", ns}, true},
      {"same effect, empty key with Exists matches all", {"", true, "", ns}, {"foo", "bar", ns}, true},
      {"same key, effect and value, Equal", {"foo", false, "bar", ns}, {"foo", "bar", ns}, true},
      {"same key and effect, different values, Equal", {"foo", false, "value1", ns}, {"foo", "value2", ns}, false},
      {"same key and value, different effects, Equal",
       {"foo", false, "bar", ns}, {"foo", "bar", taint_effect::no_execute}, false},
      {"empty effect matches every effect", {"foo", false, "bar", taint_effect::none},
       {"foo", "bar", taint_effect::prefer_no_schedule}, true},
      {"empty key and effect with Exists tolerates everything", {"", true, "", taint_effect::none},
       {"anything", "x", taint_effect::no_execute}, true},
      {"Exists ignores the toleration's value", {"foo", true, "ignored", ns}, {"foo", "bar", ns}, true},
      {"different keys", {"foo", true, "", ns}, {"other", "", ns}, false},
      {"Equal with empty value matches only an empty taint value", {"foo", false, "", ns}, {"foo", "bar", ns}, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.tol.tolerates(r.t), r.want);
  }
}

TEST(Toleration, CompiledFromPod) {
  auto pod = test::make_pod("p");
  auto* t = pod->mutable_spec()->add_tolerations();
  t->set_key("dedicated");
  t->set_operator_("Equal");
  t->set_value("gpu");
  t->set_effect("NoSchedule");
  auto* t2 = pod->mutable_spec()->add_tolerations();
  t2->set_operator_("Exists");
  auto info = test::compile_ok(pod);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->tolerations.size(), 2u);
  EXPECT_FALSE(info->tolerations[0].op_exists);
  EXPECT_EQ(info->tolerations[0].effect, taint_effect::no_schedule);
  EXPECT_TRUE(info->tolerations[1].op_exists);
  EXPECT_EQ(info->tolerations[1].effect, taint_effect::none);
  EXPECT_EQ(parse_taint_effect("PreferNoSchedule"), taint_effect::prefer_no_schedule);
  EXPECT_EQ(parse_taint_effect("bogus"), taint_effect::none);
}

// A creationTimestamp past 2262 (RFC 3339 allows up to 9999) saturates instead of overflowing; the
// fuzzer found the overflow (tests/fuzz/regressions/cluster_manifests/far-future-creation-timestamp).
TEST(CompilePod, FarFutureCreationTimestampSaturates) {
  auto pod = test::make_pod("p");
  pod->mutable_metadata()->mutable_creation_timestamp()->set_seconds(65914560000);  // year 4058
  auto res = compile_pod(pod);
  ASSERT_TRUE(res.ok());
  EXPECT_GT((*res)->creation_ns, int64_t{9} * 1000000000LL * 1000000000LL);
}

TEST(CompilePod, Volumes) {
  auto pod = test::make_pod("web");
  auto* spec = pod->mutable_spec();
  auto* claim = spec->add_volumes();
  claim->set_name("data");
  claim->mutable_volume_source()->mutable_persistent_volume_claim()->set_claim_name("data-web");
  auto* eph = spec->add_volumes();
  eph->set_name("scratch");
  eph->mutable_volume_source()->mutable_ephemeral();
  auto* disk = spec->add_volumes();
  disk->set_name("disk");
  disk->mutable_volume_source()->mutable_aws_elastic_block_store()->set_volume_id("vol-1");
  auto res = compile_pod(pod);
  ASSERT_TRUE(res.ok()) << res.err().message;
  const auto& v = (*res)->volumes;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].claim_name, "data-web");
  EXPECT_FALSE(v[0].ephemeral);
  EXPECT_EQ(v[1].claim_name, "web-scratch");  // the ephemeral controller's name for the claim
  EXPECT_TRUE(v[1].ephemeral);
  EXPECT_EQ(v[2].claim_name, "");
  EXPECT_EQ(v[2].inline_source.kind, volume_source::aws_ebs);
  EXPECT_EQ(v[2].inline_source.id, "vol-1");
  EXPECT_TRUE((*res)->has_claims());
}

}  // namespace
}  // namespace kas
