// Hostile input through every reader in config/ (cluster manifests, --config, workload files and
// their templates): input that made yaml-cpp 0.7 loop forever, alias bombs and cycles, deep nesting
// and oversized files and objects must each end promptly in one error that names the file (and,
// for multi-document files, the document); input within the limits still loads.
#include "config/yaml_guard.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/cluster_manifests.hpp"
#include "config/runtime_config.hpp"
#include "config/workload.hpp"

namespace kas {
namespace {

namespace fs = std::filesystem;

// A directory of this test process's own (ctest runs tests as parallel processes).
fs::path scratch() {
  fs::path d = fs::path(::testing::TempDir()) / ("kas_yaml_guard_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string write_file(const std::string& name, const std::string& text) {
  fs::path p = scratch() / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// Some cases write files of several MiB: each test leaves nothing behind.
class YamlGuard : public ::testing::Test {
protected:
  void TearDown() override { fs::remove_all(scratch()); }
};

// What each reader said: "" when it loaded the file.
std::string manifests(const std::string& path) {
  auto m = load_manifests({path});
  if (!m) return m.err().message;
  auto c = compile_cluster(*m);
  return c ? "" : c.err().message;
}

std::string config(const std::string& path) {
  auto c = load_scheduler_config(path);
  return c ? "" : c.err().message;
}

std::string workload_file(const std::string& path) {
  auto w = load_workload(path);
  return w ? "" : w.err().message;
}

// A hang guard, not a timing assertion: yaml-cpp 0.7's LoadAll loops forever on some inputs,
// allocating as it goes, and a thread in that loop can be neither stopped nor joined. A load still
// running after 5 s fails the test by ending its process (ctest runs each test as its own).
std::string without_hanging(const std::string& what, const std::function<std::string()>& load) {
  auto f = std::async(std::launch::async, load);
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    std::cerr << "HANG: " << what << " did not finish in 5 s\n" << std::flush;
    std::_Exit(1);
  }
  return f.get();
}

// Inputs that hung yaml-cpp 0.7 or are near them: a stray flow indicator where a node should start.
const std::vector<std::string> invalid_inputs = {",", "]", "}", ",,", "- ,", "- a\n,", "---\n,\n", "[a, b]\n,"};

// Short strings of YAML's indicator characters, drawn with a fixed seed so every run tries the
// same ones. Some are valid (a comment, an empty node); all must end.
std::vector<std::string> random_inputs() {
  std::vector<std::string> out;
  const std::string alphabet = ",[]{}:-?&*!|>'\"#%@";
  std::mt19937 rng(1040);
  for (int i = 0; i < 20; ++i) {
    std::string s;
    size_t len = 1 + rng() % 8;
    for (size_t k = 0; k < len; ++k) s += alphabet[rng() % alphabet.size()];
    out.push_back(s);
  }
  return out;
}

// Each reader, given a file that holds `text`: the workload readers get it both as the workload
// and as a node template of an otherwise good workload.
std::vector<std::pair<std::string, std::string>> load_everywhere(const std::string& tag, const std::string& text) {
  std::vector<std::pair<std::string, std::string>> said;  // (file, message)
  std::string f = write_file(tag + ".yaml", text);
  said.emplace_back(f, without_hanging("manifests " + tag, [&] { return manifests(f); }));
  said.emplace_back(f, without_hanging("config " + tag, [&] { return config(f); }));
  said.emplace_back(f, without_hanging("workload " + tag, [&] { return workload_file(f); }));
  std::string tmpl = write_file("templates/" + tag + ".yaml", text);
  std::string w = write_file(tag + "-workload.yaml", "name: W\nops:\n- opcode: createNodes\n  count: 1\n"
                                                     "  nodeTemplatePath: templates/" + tag + ".yaml\n");
  said.emplace_back(tmpl, without_hanging("workload template " + tag, [&] { return workload_file(w); }));
  return said;
}

TEST_F(YamlGuard, InputsThatLoopedInYamlCppEndWithAnErrorNamingTheFile) {
  for (size_t i = 0; i < invalid_inputs.size(); ++i) {
    SCOPED_TRACE("input \"" + invalid_inputs[i] + "\"");
    for (auto& [file, msg] : load_everywhere("invalid" + std::to_string(i), invalid_inputs[i])) {
      ASSERT_FALSE(msg.empty()) << file;
      EXPECT_NE(msg.find(file + ": "), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST_F(YamlGuard, ShortStringsOfIndicatorsEnd) {
  auto inputs = random_inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("input \"" + inputs[i] + "\"");
    for (auto& [file, msg] : load_everywhere("random" + std::to_string(i), inputs[i])) {
      if (msg.empty()) continue;  // it was a valid file after all
      EXPECT_NE(msg.find(file + ": "), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST_F(YamlGuard, NoProgressNamesTheDocumentLineAndColumn) {
  struct row {
    const char* text;
    std::string want;  // after "<file>: "
  } rows[] = {
    {",", "document 1: line 1, column 1: invalid YAML: the parser made no progress here"},
    {",,", "document 1: line 1, column 1: invalid YAML: the parser made no progress here"},
    // The comma is left over from the document before it, which is where its writer put it.
    {"- a\n,", "document 1: line 2, column 1: invalid YAML: the parser made no progress here"},
    {"kind: Namespace\n---\n,\n", "document 2: line 3, column 1: invalid YAML: the parser made no progress here"},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.text);
    std::string f = write_file("no_progress.yaml", r.text);
    std::string msg = without_hanging(r.text, [&] { return manifests(f); });
    EXPECT_EQ(msg.rfind(f + ": " + r.want, 0), 0u) << msg;
  }
  std::string j = write_file("no_progress.json", ",");
  EXPECT_EQ(without_hanging("json", [&] { return manifests(j); }),
            j + ": line 1, column 1: invalid JSON: the parser made no progress here (yaml-cpp 0.7 would loop forever)");
}

// Nine anchors, each a list of nine aliases of the one before: well under a kilobyte that walks as
// 387 million nodes. Such a manifest took 47 s to refuse before alias expansion was bounded.
std::string alias_bomb(const std::string& indent) {
  std::string out = indent + "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev = "*" + std::string(1, char(c - 1));
    out += indent + c + ": &" + c + " [" + prev;
    for (int k = 1; k < 9; ++k) out += "," + prev;
    out += "]\n";
  }
  return out;
}

TEST_F(YamlGuard, AliasBombIsRefusedWhereItGoesOff) {
  std::string pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  labels:\n" + alias_bomb("    ") +
                    "spec:\n  containers: [{name: c}]\n";
  std::string f = write_file("bomb.yaml", pod);
  EXPECT_EQ(without_hanging("manifest bomb", [&] { return manifests(f); }),
            f + ": document 1: metadata.labels.f[0]: too many alias expansions (limit 100000 nodes, or as many as "
                "the document writes out)");

  std::string cfg = write_file("bomb-config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                                   "kind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n"
                                                   "  - name: NodeResourcesFit\n    args:\n" +
                                                     alias_bomb("      "));
  EXPECT_EQ(without_hanging("config bomb", [&] { return config(cfg); }),
            cfg + ": document 1: profiles[0].pluginConfig[0].args.f[0]: too many alias expansions (limit 100000 "
                  "nodes, or as many as the document writes out)");

  // Anchors as people use them still load: one block of labels shared by the object and its selector.
  std::string shared = write_file("aliases.yaml", "apiVersion: apps/v1\nkind: ReplicaSet\n"
                                                  "metadata: {name: web, labels: &l {app: web, tier: front}}\n"
                                                  "spec: {selector: {matchLabels: *l}}\n");
  EXPECT_EQ(manifests(shared), "");
}

TEST_F(YamlGuard, AliasCycleIsRefused) {
  // yaml-cpp resolves an alias inside the node its anchor names to that node: a tree with a loop,
  // which every recursive walk followed until the stack overflowed.
  std::string f = write_file("cycle.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: loop\n"
                                           "  labels: &a {app: *a}\nspec:\n  containers: [{name: c}]\n");
  EXPECT_EQ(without_hanging("cycle", [&] { return manifests(f); }),
            f + ": document 1: metadata.labels.app: alias *a refers to a node that contains it");
}

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST_F(YamlGuard, NestingDepthIsBounded) {
  // A kind the scheduler skips: only the guard looks inside it.
  auto config_map = [](const std::string& data) {
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {x: " + data + "}\n";
  };
  std::string ok = write_file("deep-ok.yaml", config_map(nested(98)));  // 100 levels with the two maps
  auto m = load_manifests({ok});
  ASSERT_TRUE(m) << m.err().message;
  EXPECT_EQ(m->warnings.size(), 1u);

  std::string deep = write_file("deep.yaml", "kind: Namespace\n---\n" + config_map(nested(99)));
  EXPECT_EQ(manifests(deep), deep + ": document 2: line 6, column 109: nesting deeper than 100 levels");

  // Through an alias: the anchored node is 60 levels, used 50 levels down.
  std::string via = write_file("deep-alias.yaml", config_map("[" + nested(59) + ", &n " + nested(60) + ", " +
                                                             std::string(49, '[') + "*n" + std::string(49, ']') + "]"));
  std::string msg = manifests(via);
  EXPECT_EQ(msg.rfind(via + ": document 1: line 4, column ", 0), 0u) << msg;
  EXPECT_NE(msg.find(": nesting deeper than 100 levels (through alias *n)"), std::string::npos) << msg;

  std::string cfg = write_file("deep-config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                                   "kind: KubeSchedulerConfiguration\nprofiles: " + nested(100) + "\n");
  EXPECT_EQ(config(cfg), cfg + ": document 1: line 3, column 110: nesting deeper than 100 levels");
  std::string wl = write_file("deep-workload.yaml", "name: W\nops: " + nested(100) + "\n");
  EXPECT_EQ(workload_file(wl), wl + ": line 2, column 105: nesting deeper than 100 levels");
}

// A file one byte over the limit, made sparse so the test writes next to nothing to disk.
std::string oversized(const std::string& name) {
  std::string p = write_file(name, "");
  fs::resize_file(p, max_input_file_bytes + 1);
  return p;
}

TEST_F(YamlGuard, FilesOverTheLimitAreNotRead) {
  const std::string want = ": the file is larger than 64 MiB, the most one input file may hold";
  std::string f = oversized("huge.yaml");
  EXPECT_EQ(without_hanging("manifests", [&] { return manifests(f); }), f + want);
  EXPECT_EQ(without_hanging("config", [&] { return config(f); }), f + want);
  EXPECT_EQ(without_hanging("workload", [&] { return workload_file(f); }), f + want);
}

std::string big_annotation(size_t bytes) { return "    big: \"" + std::string(bytes, 'x') + "\"\n"; }

std::string pod(const std::string& name, size_t annotation_bytes) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n" +
         big_annotation(annotation_bytes) + "spec:\n  containers: [{name: c}]\n";
}

TEST_F(YamlGuard, ObjectsOverThreeMebibytesAreRefused) {
  std::string one = write_file("big-pod.yaml", "kind: Namespace\napiVersion: v1\nmetadata: {name: a}\n---\n" +
                                                 pod("big", max_object_bytes));
  std::string msg = manifests(one);
  EXPECT_EQ(msg.rfind(one + ": document 2 (Pod default/big): the object is ", 0), 0u) << msg.substr(0, 200);
  EXPECT_NE(msg.find(" bytes, more than the 3 MiB the apiserver accepts for one object"), std::string::npos)
    << msg.substr(0, 200);

  // In a List the limit is per item: two pods of 1.6 MiB load, one of 3 MiB does not.
  auto list = [](const std::vector<std::string>& items) {
    std::string out = "apiVersion: v1\nkind: List\nitems:\n";
    for (auto& i : items) {
      std::string indented = "- ";
      for (char c : i) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
      out += indented.substr(0, indented.size() - 2);
    }
    return out;
  };
  std::string ok = write_file("list-ok.yaml", list({pod("a", 1600 << 10), pod("b", 1600 << 10)}));
  EXPECT_EQ(manifests(ok), "");
  std::string bad = write_file("list-big.yaml", list({pod("a", 1000), pod("b", max_object_bytes)}));
  msg = manifests(bad);
  EXPECT_EQ(msg.rfind(bad + ": document 1 item 2 (Pod default/b): the object is ", 0), 0u) << msg.substr(0, 200);

  // A config or workload document is one object.
  std::string padding = "# " + std::string(max_object_bytes, '-') + "\n";
  std::string cfg = write_file("big-config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                                  "kind: KubeSchedulerConfiguration\n" + padding);
  msg = config(cfg);
  EXPECT_EQ(msg.rfind(cfg + ": document 1: the document is ", 0), 0u) << msg.substr(0, 200);
  EXPECT_NE(msg.find("more than the 3 MiB allowed for one object"), std::string::npos) << msg.substr(0, 200);
  std::string wl = write_file("big-workload.yaml", "name: W\n" + padding + "ops: [{opcode: barrier}]\n");
  msg = workload_file(wl);
  EXPECT_EQ(msg.rfind(wl + ": the document is ", 0), 0u) << msg.substr(0, 200);
}

}  // namespace
}  // namespace kas
