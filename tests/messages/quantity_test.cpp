// kas::parse_quantity against Kubernetes' resource.ParseQuantity grammar and rounding.
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "messages/quantity.hpp"

namespace {

struct Good {
  const char* name;
  const char* text;
  int64_t value;  // Value(): rounded away from zero, as upstream
  int64_t milli;  // MilliValue()
};

const Good kGood[] = {
    {"milli", "100m", 1, 100},
    {"binary_fraction", "1.5Gi", 1610612736, 1610612736000},
    {"exponent", "2e3", 2000, 2000000},
    {"exponent_upper", "2E3", 2000, 2000000},
    {"exponent_negative", "5e-3", 1, 5},
    {"exponent_plus", "1e+3", 1000, 1000000},
    {"kilo", "1k", 1000, 1000000},
    {"decimal_fraction", "0.1", 1, 100},
    {"kibi", "1Ki", 1024, 1024000},
    {"mebi", "128Mi", 134217728, 134217728000},
    {"explicit_plus", "+5", 5, 5000},
    {"negative", "-1", -1, -1000},
    {"negative_fraction_rounds_away", "-1.5", -2, -1500},
    {"leading_dot", ".5", 1, 500},
    {"trailing_dot", "5.", 5, 5000},
    {"milli_rounds_up", "1.0001m", 1, 2},
    {"tiny_rounds_up", "0.0001", 1, 1},
    {"nano", "1n", 1, 1},
    {"micro", "1500u", 1, 2},
    {"zero", "0", 0, 0},
    {"zero_with_suffix", "0Gi", 0, 0},
    {"zero_milli", "0m", 0, 0},
    {"dot_only_is_zero", ".", 0, 0},
    {"leading_zeros", "007", 7, 7000},
    {"cpu_whole", "4", 4, 4000},
    {"mega", "2M", 2000000, 2000000000},
    {"giga", "1G", 1000000000, 1000000000000},
    {"tera", "1T", 1000000000000, 1000000000000000},
    {"peta", "1P", 1000000000000000, 1000000000000000000},
    {"exa", "1E", 1000000000000000000, std::numeric_limits<int64_t>::max()},
    {"tebi", "1Ti", 1099511627776, 1099511627776000},
    {"pebi", "1Pi", 1125899906842624, 1125899906842624000},
    {"exbi", "1Ei", 1152921504606846976, std::numeric_limits<int64_t>::max()},
    {"half_kibi", "0.5Ki", 512, 512000},
    {"fraction_mebi", "1.1Mi", 1153434, 1153433600},
    {"many_digits", "1.000000000000000000000000000000000000000001", 2, 1001},
    {"huge_saturates", "99999999999999999999999", std::numeric_limits<int64_t>::max(),
     std::numeric_limits<int64_t>::max()},
    {"huge_negative_saturates", "-99999999999999999999999", std::numeric_limits<int64_t>::min(),
     std::numeric_limits<int64_t>::min()},
    {"huge_exponent_saturates", "1e99999", std::numeric_limits<int64_t>::max(),
     std::numeric_limits<int64_t>::max()},
    {"tiny_exponent", "1e-99999", 1, 1},
    {"max_int64", "9223372036854775807", std::numeric_limits<int64_t>::max(),
     std::numeric_limits<int64_t>::max()},
};

class QuantityGood : public testing::TestWithParam<Good> {};

TEST_P(QuantityGood, Parses) {
  const Good& g = GetParam();
  auto q = kas::parse_quantity(g.text);
  ASSERT_TRUE(q.ok()) << g.text << ": " << q.err().message;
  EXPECT_EQ(q->value(), g.value) << g.text;
  EXPECT_EQ(q->milli_value(), g.milli) << g.text;
  EXPECT_EQ(q->is_zero(), g.milli == 0) << g.text;
  EXPECT_EQ(q->negative(), g.milli < 0) << g.text;
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityGood, testing::ValuesIn(kGood),
                         [](const testing::TestParamInfo<Good>& i) { return std::string(i.param.name); });

struct Bad {
  const char* name;
  const char* text;
  const char* message_part;
};

const char kRegex[] = "quantities must match the regular expression";
const char kSuffix[] = "unable to parse quantity's suffix";

const Bad kBad[] = {
    {"empty", "", kRegex},
    {"two_dots", "1.2.3", kRegex},
    {"letters", "abc", kRegex},
    {"lowercase_b", "1Kb", kRegex},
    {"space", "1 Gi", kRegex},
    {"leading_space", " 1", kRegex},
    {"trailing_space", "1 ", kRegex},
    {"dangling_e", "1e", kSuffix},
    {"double_minus", "--1", kRegex},
    {"suffix_only", "Mi", kRegex},
    {"sign_only", "-", kRegex},
    {"lower_ki", "1ki", kSuffix},
    {"bare_i", "1i", kSuffix},
    {"fraction_mi_lower", "0.1mi", kSuffix},
    {"dangling_exponent_sign", "1e-", kSuffix},
    {"plus_inside", "1+1.0M", kRegex},
    {"double_suffix", "1MM", kSuffix},
};

class QuantityBad : public testing::TestWithParam<Bad> {};

TEST_P(QuantityBad, Rejects) {
  const Bad& b = GetParam();
  auto q = kas::parse_quantity(b.text);
  ASSERT_FALSE(q.ok()) << "accepted \"" << b.text << "\"";
  EXPECT_NE(q.err().message.find(b.message_part), std::string::npos) << q.err().message;
  EXPECT_NE(q.err().message.find(std::string("\"") + b.text + "\""), std::string::npos) << q.err().message;
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityBad, testing::ValuesIn(kBad),
                         [](const testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

TEST(Quantity, RegexMessageIsKubes) {
  auto q = kas::parse_quantity("abc");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.err().message.find(
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
            std::string::npos);
}

}  // namespace
