#include <gtest/gtest.h>

#include "cache/resources.hpp"
#include "builders.hpp"

namespace kas {
namespace {

TEST(ResourceNames, Classification) {
  struct row {
    const char* name;
    bool extended, hugepages, scalar;
  };
  const row rows[] = {
      {"cpu", false, false, false},
      {"memory", false, false, false},
      {"ephemeral-storage", false, false, false},
      {"pods", false, false, false},
      {"example.com/foo", true, false, true},
      {"nvidia.com/gpu", true, false, true},
      {"kubernetes.io/foo", false, false, true},   // prefixed native
      {"foo.kubernetes.io/bar", false, false, true},
      {"requests.example.com/foo", false, false, false},
      {"hugepages-2Mi", false, true, true},
      {"attachable-volumes-aws-ebs", false, false, true},
      {"foo", false, false, false},                // native, unprefixed
      {"Example.com/foo", false, false, false},    // prefix not a DNS subdomain
      {"example.com/-foo", false, false, false},   // name must start alphanumeric
      {"example.com/a/b", false, false, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(is_extended_resource_name(r.name), r.extended);
    EXPECT_EQ(is_hugepages_resource_name(r.name), r.hugepages);
    EXPECT_EQ(is_scalar_resource_name(r.name), r.scalar);
  }
}

TEST(ResourceList, ArithmeticKeepsScalarsSorted) {
  resource_list a = test::rl(100, 10, {{"z.io/b", 1}, {"a.io/a", 2}});
  ASSERT_EQ(a.scalar.size(), 2u);
  EXPECT_EQ(a.scalar[0].first, "a.io/a");
  resource_list b = test::rl(50, 20, {{"m.io/m", 5}, {"a.io/a", 1}});
  a.add(b);
  EXPECT_EQ(a, test::rl(150, 30, {{"a.io/a", 3}, {"m.io/m", 5}, {"z.io/b", 1}}));
  a.sub(b);
  EXPECT_EQ(a, test::rl(100, 10, {{"a.io/a", 2}, {"m.io/m", 0}, {"z.io/b", 1}}));
  resource_list c = test::rl(300, 5, {{"a.io/a", 1}, {"q.io/q", 7}});
  a.max_with(c);
  EXPECT_EQ(a, test::rl(300, 10, {{"a.io/a", 2}, {"m.io/m", 0}, {"q.io/q", 7}, {"z.io/b", 1}}));
  EXPECT_EQ(a.get_scalar("missing"), 0);
  EXPECT_FALSE(a.has_scalar("missing"));
}

// Messages print amounts as kube prints a canonical quantity.
TEST(ResourceFormat, QuantitiesAsKubeWritesThem) {
  EXPECT_EQ(format_milli_quantity(500), "500m");
  EXPECT_EQ(format_milli_quantity(5000), "5");
  EXPECT_EQ(format_milli_quantity(1500), "1500m");
  EXPECT_EQ(format_byte_quantity(0), "0");
  EXPECT_EQ(format_byte_quantity(10LL << 30), "10Gi");
  EXPECT_EQ(format_byte_quantity(1536LL << 10), "1536Ki");
  EXPECT_EQ(format_byte_quantity(3000000), "3M");
  EXPECT_EQ(format_byte_quantity(1001), "1001");
  EXPECT_EQ(format_byte_quantity(1LL << 60), "1Ei");
  EXPECT_EQ(format_byte_quantity(-(2LL << 20)), "-2Mi");
}

}  // namespace
}  // namespace kas
