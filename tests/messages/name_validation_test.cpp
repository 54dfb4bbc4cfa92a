// apimachinery's name validators (messages/name_validation.hpp), with the apiserver's reasons.
#include "messages/name_validation.hpp"

#include <gtest/gtest.h>

namespace kas {
namespace {

TEST(NameValidation, Subdomain) {
  for (const char* ok : {"a", "web-0", "node-1.example.com", "0abc"}) EXPECT_EQ(dns1123_subdomain_problem(ok), "") << ok;
  for (const char* bad : {"", "Bad_Name", "-a", "a-", "a..b", ".a", "a.", "UPPER"})
    EXPECT_NE(dns1123_subdomain_problem(bad), "") << bad;
  EXPECT_EQ(dns1123_subdomain_problem(std::string(253, 'a')), "");
  EXPECT_EQ(dns1123_subdomain_problem(std::string(254, 'a')), "must be no more than 253 characters");
}

TEST(NameValidation, Label) {
  EXPECT_EQ(dns1123_label_problem("kube-system"), "");
  EXPECT_NE(dns1123_label_problem("a.b"), "");
  EXPECT_EQ(dns1123_label_problem(std::string(64, 'a')), "must be no more than 63 characters");
}

TEST(NameValidation, LabelKeys) {
  for (const char* ok : {"app", "App_1.x", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "a/B"})
    EXPECT_EQ(qualified_name_problem(ok), "") << ok;
  EXPECT_EQ(qualified_name_problem("/a"), "prefix part must be non-empty");
  EXPECT_EQ(qualified_name_problem("a/"), "name part must be non-empty");
  EXPECT_EQ(qualified_name_problem(""), "name part must be non-empty");
  EXPECT_NE(qualified_name_problem("bad key!"), "");
  EXPECT_NE(qualified_name_problem("Example.com/a").find("prefix part a lowercase RFC 1123 subdomain"), std::string::npos);
  EXPECT_EQ(qualified_name_problem(std::string(64, 'a')), "name part must be no more than 63 characters");
}

TEST(NameValidation, LabelValues) {
  for (const char* ok : {"", "v", "My_value-1.2"}) EXPECT_EQ(label_value_problem(ok), "") << ok;
  for (const char* bad : {"bad value!", "-a", "a_", "a/b"}) EXPECT_NE(label_value_problem(bad), "") << bad;
  EXPECT_EQ(label_value_problem(std::string(64, 'v')), "must be no more than 63 characters");
}

TEST(NameValidation, BoolFormsAgree) {
  for (const char* s : {"a", "kubernetes.io/hostname", "a//b", "/a", "a/", "Example.com/a", "-x", "x.y/z_1"})
    EXPECT_EQ(is_qualified_name(s), qualified_name_problem(s).empty()) << s;
  EXPECT_FALSE(is_qualified_name("a/b/c"));  // a second slash is never a name part
  EXPECT_TRUE(is_dns1123_subdomain("node-1.example.com"));
  EXPECT_FALSE(is_dns1123_subdomain(""));
}

}  // namespace
}  // namespace kas
