// The apiserver's validation of the fields the scheduler reads (config/object_validation.hpp).
#include "config/object_validation.hpp"

#include <gtest/gtest.h>

#include "messages/codec.hpp"

namespace kas {
namespace {

TEST(ObjectValidation, Subdomain) {
  for (const char* ok : {"a", "web-0", "node-1.example.com", "0abc"}) EXPECT_EQ(dns1123_subdomain_problem(ok), "") << ok;
  for (const char* bad : {"", "Bad_Name", "-a", "a-", "a..b", ".a", "a.", "UPPER"})
    EXPECT_NE(dns1123_subdomain_problem(bad), "") << bad;
  EXPECT_EQ(dns1123_subdomain_problem(std::string(253, 'a')), "");
  EXPECT_EQ(dns1123_subdomain_problem(std::string(254, 'a')), "must be no more than 253 characters");
}

TEST(ObjectValidation, Label) {
  EXPECT_EQ(dns1123_label_problem("kube-system"), "");
  EXPECT_NE(dns1123_label_problem("a.b"), "");
  EXPECT_EQ(dns1123_label_problem(std::string(64, 'a')), "must be no more than 63 characters");
}

TEST(ObjectValidation, LabelKeys) {
  for (const char* ok : {"app", "App_1.x", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "a/B"})
    EXPECT_EQ(label_key_problem(ok), "") << ok;
  EXPECT_EQ(label_key_problem("/a"), "prefix part must be non-empty");
  EXPECT_EQ(label_key_problem("a/"), "name part must be non-empty");
  EXPECT_EQ(label_key_problem(""), "name part must be non-empty");
  EXPECT_NE(label_key_problem("bad key!"), "");
  EXPECT_NE(label_key_problem("Example.com/a").find("prefix part a lowercase RFC 1123 subdomain"), std::string::npos);
  EXPECT_EQ(label_key_problem(std::string(64, 'a')), "name part must be no more than 63 characters");
}

TEST(ObjectValidation, LabelValues) {
  for (const char* ok : {"", "v", "My_value-1.2"}) EXPECT_EQ(label_value_problem(ok), "") << ok;
  for (const char* bad : {"bad value!", "-a", "a_", "a/b"}) EXPECT_NE(label_value_problem(bad), "") << bad;
  EXPECT_EQ(label_value_problem(std::string(64, 'v')), "must be no more than 63 characters");
}

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
