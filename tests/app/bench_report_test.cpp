// summarize(): scheduler_perf's nearest-rank rule. write_bench_report(): one self-contained page with two
// charts, escaped text, no NaN/Inf on empty or zero data, and errors that name the path.
#include "actors/app/bench_report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kas {
namespace {

namespace fs = std::filesystem;

std::vector<double> iota_vec(int from, int to) {
  std::vector<double> v;
  for (int i = from; i <= to; ++i) v.push_back(i);
  return v;
}

struct summarize_case {
  const char* name;
  std::vector<double> in;
  percentiles want;
};

TEST(Summarize, NearestRankLikeSchedulerPerf) {
  // index = ceil(len*P/100) - 1 over the ascending samples.
  const summarize_case cases[] = {
      {"empty", {}, {0, 0, 0, 0, 0, 0, 0}},
      {"one element", {7}, {7, 7, 7, 7, 7, 7, 1}},
      {"two elements", {2, 1}, {1.5, 1, 2, 2, 2, 2, 2}},
      {"three elements", {30, 10, 20}, {20, 20, 30, 30, 30, 30, 3}},
      {"ten unsorted", {10, 3, 7, 1, 9, 2, 8, 4, 6, 5}, {5.5, 5, 9, 10, 10, 10, 10}},
      // len*P/100 is an integer here: a floating-point 100*0.99 would round up one rank too far.
      {"hundred, exact ranks", iota_vec(1, 100), {50.5, 50, 90, 95, 99, 100, 100}},
      {"two hundred", iota_vec(1, 200), {100.5, 100, 180, 190, 198, 200, 200}},
      {"all equal", {4, 4, 4, 4}, {4, 4, 4, 4, 4, 4, 4}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<double> v = c.in;
    percentiles got = summarize(v);
    EXPECT_DOUBLE_EQ(got.avg, c.want.avg);
    EXPECT_EQ(got.p50, c.want.p50);
    EXPECT_EQ(got.p90, c.want.p90);
    EXPECT_EQ(got.p95, c.want.p95);
    EXPECT_EQ(got.p99, c.want.p99);
    EXPECT_EQ(got.max, c.want.max);
    EXPECT_EQ(got.samples, c.want.samples);
  }
}

TEST(Summarize, SortsInPlace) {
  std::vector<double> v = {3, 1, 2};
  summarize(v);
  EXPECT_EQ(v, (std::vector<double>{1, 2, 3}));
}

bench_result sample_result() {
  bench_result r;
  r.workload = "SchedulingBasic";
  r.workload_file = "bench/workloads/basic.yaml";
  r.threshold = 270;
  r.nodes = 500;
  r.init_pods = 500;
  r.measured_pods = 1000;
  r.scheduled = 1000;
  r.attempts = 1012;
  r.conflicts = 12;
  r.events_scheduled = 1000;
  r.window_seconds = 1;
  r.throughput_windows = {310, 420, 455, 390, 120};
  std::vector<double> w = r.throughput_windows;
  r.throughput = summarize(w);
  for (int i = 1; i <= 1000; ++i) r.latencies_ms.push_back(i * 0.5);
  r.latency_ms = summarize(r.latencies_ms);
  r.measured_seconds = 2.9;
  r.overall_pods_per_second = 1000 / 2.9;
  r.raw_pods_per_second = 2000;
  r.efficiency = r.throughput.avg / r.raw_pods_per_second;
  r.peak_rss_bytes = 64u << 20;
  r.wall_seconds = 4.2;
  r.threads = 8;
  r.workers = 4;
  r.binders = 2;
  r.pipeline_depth = 16;
  r.invariant_checks = 3000;
  return r;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

bool has_nan_or_inf(const std::string& page) {
  static const std::regex re("(^|[^a-z])-?(nan|inf)([^a-z]|$)", std::regex::icase);
  return std::regex_search(page, re);
}

// A fresh directory per test, with the pid in its name: ctest runs tests in parallel processes.
class BenchReport : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("kas_bench_report_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string write_and_read(const bench_result& r, const std::string& sub = "report") {
    fs::path dir = root_ / sub;
    auto st = write_bench_report(dir.string(), r);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.err().message);
    std::ifstream f(dir / "index.html");
    EXPECT_TRUE(f.good()) << "missing " << (dir / "index.html");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  fs::path root_;
};

TEST_F(BenchReport, WritesOneSelfContainedPageWithTwoCharts) {
  std::string page = write_and_read(sample_result(), "a/b/c");  // parents are created too
  EXPECT_EQ(count(page, "<svg"), 2u);
  EXPECT_NE(page.find("SchedulingBasic"), std::string::npos);
  EXPECT_NE(page.find("bench/workloads/basic.yaml"), std::string::npos);
  EXPECT_NE(page.find("64.0 MiB"), std::string::npos);
  EXPECT_NE(page.find("p99"), std::string::npos);
  EXPECT_FALSE(has_nan_or_inf(page));
  // Nothing is fetched: no scripts, stylesheets, images or fonts from elsewhere.
  for (const char* external : {"<script", "<link", "src=", "href=", "url(", "@import"})
    EXPECT_EQ(page.find(external), std::string::npos) << external;
}

TEST_F(BenchReport, RewritesAnExistingReport) {
  bench_result r = sample_result();
  write_and_read(r);
  r.workload = "SecondRun";
  std::string page = write_and_read(r);
  EXPECT_NE(page.find("SecondRun"), std::string::npos);
  EXPECT_EQ(page.find("SchedulingBasic"), std::string::npos);
}

TEST_F(BenchReport, ThresholdLineOnlyWhenThresholdSet) {
  bench_result r = sample_result();
  std::string with = write_and_read(r, "with");
  EXPECT_NE(with.find("class=\"threshold\""), std::string::npos);
  EXPECT_NE(with.find("threshold 270 pods/s"), std::string::npos);
  EXPECT_NE(with.find("meets threshold"), std::string::npos);  // avg 339 >= 270

  r.threshold = 0;
  std::string without = write_and_read(r, "without");
  EXPECT_EQ(without.find("class=\"threshold\""), std::string::npos);
  EXPECT_EQ(count(without, "<svg"), 2u);
}

TEST_F(BenchReport, BelowThresholdIsMarkedBad) {
  bench_result r = sample_result();
  r.threshold = 1000;
  std::string page = write_and_read(r);
  EXPECT_NE(page.find("below threshold"), std::string::npos);
  EXPECT_NE(page.find("class=\"bad\""), std::string::npos);
}

TEST_F(BenchReport, EscapesText) {
  bench_result r = sample_result();
  r.workload = "a<b&c>\"d'";
  r.workload_file = "</title><script>x</script>";
  std::string page = write_and_read(r);
  EXPECT_NE(page.find("a&lt;b&amp;c&gt;&quot;d&#39;"), std::string::npos);
  EXPECT_EQ(page.find("a<b"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

TEST_F(BenchReport, ListsViolationsInRed) {
  bench_result r = sample_result();
  r.violations = {"node n1: pods <cpu> over allocatable", "pod p2 bound twice"};
  std::string page = write_and_read(r);
  EXPECT_NE(page.find("class=\"violations\""), std::string::npos);
  EXPECT_NE(page.find("2 violations"), std::string::npos);
  EXPECT_NE(page.find("node n1: pods &lt;cpu&gt; over allocatable"), std::string::npos);
  EXPECT_NE(page.find("pod p2 bound twice"), std::string::npos);
  EXPECT_NE(page.find("class=\"bad\""), std::string::npos);

  r.violations.clear();
  std::string clean = write_and_read(r, "clean");
  EXPECT_EQ(clean.find("class=\"violations\""), std::string::npos);
  EXPECT_NE(clean.find("0 violations"), std::string::npos);
}

TEST_F(BenchReport, EmptyDataGivesNotesNotCharts) {
  std::string page = write_and_read(bench_result{});
  EXPECT_EQ(count(page, "<svg"), 0u);
  EXPECT_EQ(count(page, "No samples"), 2u);
  EXPECT_FALSE(has_nan_or_inf(page));
}

TEST_F(BenchReport, ZeroAndNonFiniteDataStayFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  bench_result r;
  r.workload = "Zero";
  r.window_seconds = 0;
  r.threshold = 100;
  r.throughput_windows = {0, 0, 0};
  r.latencies_ms = {0, 0, 0, 0};
  r.efficiency = nan;             // 0 / 0 from a caller
  r.overall_pods_per_second = inf;  // n / 0 from a caller
  std::string page = write_and_read(r);
  EXPECT_EQ(count(page, "<svg"), 2u);
  EXPECT_FALSE(has_nan_or_inf(page));

  r.throughput_windows = {nan, inf, 5};
  r.latencies_ms = {nan, 1, 2};
  r.threshold = nan;
  page = write_and_read(r, "nonfinite");
  EXPECT_EQ(count(page, "<svg"), 2u);
  EXPECT_FALSE(has_nan_or_inf(page));
}

TEST_F(BenchReport, LatencyCurveIsDownsampled) {
  bench_result r = sample_result();
  r.latencies_ms.clear();
  for (int i = 0; i < 100000; ++i) r.latencies_ms.push_back(i * 0.01);
  std::string page = write_and_read(r);
  size_t at = page.find("<polyline");
  ASSERT_NE(at, std::string::npos);
  std::string poly = page.substr(at, page.find("/>", at) - at);
  size_t points = count(poly, ",");
  EXPECT_GT(points, 100u);
  EXPECT_LE(points, 501u);  // at most 500 samples plus the curve's start at 0 %
}

TEST_F(BenchReport, ErrorNamesDirectoryUnderARegularFile) {
  fs::path file = root_ / "plain";
  std::ofstream(file) << "x";
  for (const fs::path& dir : {file / "sub", file}) {
    SCOPED_TRACE(dir.string());
    auto st = write_bench_report(dir.string(), sample_result());
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.err().message.find("--report " + dir.string() + ": cannot create directory: "), std::string::npos)
        << st.err().message;
  }
}

TEST_F(BenchReport, ErrorNamesIndexThatCannotBeWritten) {
  fs::path dir = root_ / "r";
  fs::create_directories(dir / "index.html");  // a directory where the page should go
  auto st = write_bench_report(dir.string(), sample_result());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.err().message.find((dir / "index.html").string() + ": cannot write"), std::string::npos)
      << st.err().message;
}

}  // namespace
}  // namespace kas
