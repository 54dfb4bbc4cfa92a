// ActorRuntimeConfiguration: its fields decoded from a config file, defaults when absent, and each bad
// value an error naming the file, the document and the field.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config/runtime_config.hpp"

namespace kas {
namespace {

const std::string runtime_head = "apiVersion: kube-actor-scheduler.io/v1alpha1\nkind: ActorRuntimeConfiguration\n";

// Writes `yaml` to a file of its own (ctest runs tests in parallel processes) and loads it. `path` gets
// the file's name, which errors start with.
result<scheduler_config> load(const std::string& yaml, std::string& path) {
  path = ::testing::TempDir() + std::to_string(::getpid()) + "_runtime.yaml";
  std::ofstream(path) << yaml;
  auto r = load_scheduler_config(path);
  std::remove(path.c_str());
  return r;
}

TEST(RuntimeConfig, RecordMetrics) {
  struct tc {
    const char* name;
    std::string yaml;
    bool want;
  } cases[] = {
      {"no file section: on", "", true},
      {"absent: on", runtime_head + "threads: 2\n", true},
      {"false", runtime_head + "recordMetrics: false\n", false},
      {"true", runtime_head + "recordMetrics: true\n", true},
      {"YAML 1.1 off", runtime_head + "recordMetrics: off\n", false},
      {"beside batching", runtime_head + "batching: true\nrecordMetrics: false\n", false},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path;
    auto r = load(c.yaml, path);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->runtime.record_metrics, c.want);
  }
}

TEST(RuntimeConfig, RecordMetricsDefaultIsOn) { EXPECT_TRUE(runtime_config{}.record_metrics); }

TEST(RuntimeConfig, BadValuesNameFileDocumentAndField) {
  const std::string kube = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n";
  struct tc {
    const char* name;
    std::string yaml;
    std::string want;  // after "<file>: "
  } cases[] = {
      {"recordMetrics not a boolean", runtime_head + "recordMetrics: maybe\n",
       "document 1: recordMetrics: expected true or false, got \"maybe\""},
      {"recordMetrics a number", runtime_head + "recordMetrics: 0\n",
       "document 1: recordMetrics: expected true or false, got \"0\""},
      {"recordMetrics a list", runtime_head + "recordMetrics: [false]\n",
       "document 1: recordMetrics: expected true or false, got a non-scalar"},
      {"in the second document", kube + runtime_head + "recordMetrics: nope\n",
       "document 2: recordMetrics: expected true or false, got \"nope\""},
      {"misspelt", runtime_head + "recordmetrics: false\n", "document 1: recordmetrics: unknown field"},
      {"batching keeps its message", runtime_head + "batching: sometimes\n",
       "document 1: batching: expected true or false, got \"sometimes\""},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path;
    auto r = load(c.yaml, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, path + ": " + c.want);
  }
}

}  // namespace
}  // namespace kas
