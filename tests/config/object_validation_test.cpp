// The apiserver's validation of the fields the scheduler reads (config/object_validation.hpp).
#include "config/object_validation.hpp"

#include <gtest/gtest.h>

#include "messages/codec.hpp"

namespace kas {
namespace {

k8s::core::Pod pod(const std::string& yaml) {
  k8s::core::Pod p;
  EXPECT_TRUE(codec::decode_yaml(yaml, p));
  return p;
}

std::string problem(const k8s::core::Pod& p) {
  auto s = validate_object(p);
  return s ? "" : s.err().message;
}

TEST(ObjectValidation, Pods) {
  EXPECT_EQ(problem(pod("metadata: {name: p, labels: {app: web}}\nspec: {containers: [{name: c}]}")), "");
  EXPECT_EQ(problem(pod("metadata: {name: p}\nspec: {}")), "spec.containers: Required value");
  EXPECT_EQ(problem(pod("metadata: {name: p}\nspec: {containers: [{image: i}]}")),
            "spec.containers[0].name: Required value");
  EXPECT_EQ(problem(pod("metadata: {name: p}\nspec: {initContainers: [{name: c}], containers: [{name: c}]}")),
            "spec.containers[0].name: Duplicate value: \"c\"");
  EXPECT_EQ(problem(pod("metadata: {name: p}\nspec: {containers: [{name: c}], nodeSelector: {zone: \"a b\"}}"))
                .rfind("spec.nodeSelector: Invalid value: \"a b\": a valid label", 0),
            0u);
  EXPECT_EQ(problem(pod("metadata: {name: P}\nspec: {containers: [{name: c}]}")).rfind(
                "metadata.name: Invalid value: \"P\": a lowercase RFC 1123 subdomain", 0),
            0u);
  EXPECT_EQ(problem(pod("metadata: {name: p, namespace: my_ns}\nspec: {containers: [{name: c}]}")).rfind(
                "metadata.namespace: Invalid value: \"my_ns\": a lowercase RFC 1123 label", 0),
            0u);
}

TEST(ObjectValidation, NamespaceNamesAreLabels) {
  k8s::core::Namespace ns;
  ns.mutable_metadata()->set_name("a.b");
  EXPECT_FALSE(validate_object(ns));
  ns.mutable_metadata()->set_name("team-a");
  EXPECT_TRUE(validate_object(ns));
  k8s::core::Node n;
  n.mutable_metadata()->set_name("a.b");
  EXPECT_TRUE(validate_object(n));  // node names are subdomains
}

}  // namespace
}  // namespace kas
