#include <gtest/gtest.h>

#include <functional>

#include "builders.hpp"

namespace kas {
namespace {

struct expr {
  std::string key, op;
  std::vector<std::string> values;
};

node_selector_term term_of(const std::vector<expr>& exprs, const std::vector<expr>& fields = {}) {
  k8s::core::NodeSelectorTerm t;
  for (auto& e : exprs) {
    auto* r = t.add_match_expressions();
    r->set_key(e.key);
    r->set_operator_(e.op);
    for (auto& v : e.values) r->add_values(v);
  }
  for (auto& e : fields) {
    auto* r = t.add_match_fields();
    r->set_key(e.key);
    r->set_operator_(e.op);
    for (auto& v : e.values) r->add_values(v);
  }
  auto c = compile_node_selector_term(t, "term");
  EXPECT_TRUE(c.ok());
  return *c;
}

TEST(NodeSelectorTerm, Operators) {
  const label_map node({{"zone", "a"}, {"cpus", "8"}, {"weird", "eight"}, {"neg", "-3"}});
  struct row {
    const char* name;
    std::vector<expr> exprs;
    bool want;
  };
  const row rows[] = {
      {"In matches", {{"zone", "In", {"b", "a"}}}, true},
      {"In without the label", {{"region", "In", {"a"}}}, false},
      {"In with other value", {{"zone", "In", {"b"}}}, false},
      {"In with no values is invalid", {{"zone", "In", {}}}, false},
      {"NotIn with other value", {{"zone", "NotIn", {"b"}}}, true},
      {"NotIn with the value", {{"zone", "NotIn", {"a"}}}, false},
      {"NotIn without the label", {{"region", "NotIn", {"a"}}}, true},
      {"Exists", {{"zone", "Exists", {}}}, true},
      {"Exists missing", {{"region", "Exists", {}}}, false},
      {"Exists with values is invalid", {{"zone", "Exists", {"a"}}}, false},
      {"DoesNotExist", {{"region", "DoesNotExist", {}}}, true},
      {"DoesNotExist present", {{"zone", "DoesNotExist", {}}}, false},
      {"Gt true", {{"cpus", "Gt", {"4"}}}, true},
      {"Gt equal is false", {{"cpus", "Gt", {"8"}}}, false},
      {"Lt true", {{"cpus", "Lt", {"16"}}}, true},
      {"Lt false", {{"cpus", "Lt", {"8"}}}, false},
      {"Gt with a plus sign is not a valid label value", {{"cpus", "Gt", {"+4"}}}, false},
      {"Gt missing label", {{"gpus", "Gt", {"0"}}}, false},
      {"Gt non-integer node label", {{"weird", "Gt", {"1"}}}, false},
      {"Gt non-integer value is invalid", {{"cpus", "Gt", {"abc"}}}, false},
      {"Gt decimal value is invalid", {{"cpus", "Gt", {"1.5"}}}, false},
      {"Gt with two values is invalid", {{"cpus", "Gt", {"1", "2"}}}, false},
      {"Gt with no value is invalid", {{"cpus", "Gt", {}}}, false},
      {"Gt negative value is not a valid label value", {{"cpus", "Gt", {"-5"}}}, false},
      {"Lt overflowing value is invalid", {{"cpus", "Lt", {"99999999999999999999"}}}, false},
      {"Lt compares a negative node label", {{"neg", "Lt", {"0"}}}, true},
      {"unknown operator is invalid", {{"zone", "Equals", {"a"}}}, false},
      {"invalid key is invalid", {{"bad key", "Exists", {}}}, false},
      {"requirements are ANDed", {{"zone", "In", {"a"}}, {"cpus", "Gt", {"10"}}}, false},
      {"all requirements hold", {{"zone", "In", {"a"}}, {"cpus", "Gt", {"2"}}}, true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(term_of(r.exprs).matches(node, "n1"), r.want);
  }
}

TEST(NodeSelectorTerm, MatchFields) {
  struct row {
    const char* name;
    std::vector<expr> fields;
    bool want;
  };
  const row rows[] = {
      {"metadata.name In", {{"metadata.name", "In", {"n1"}}}, true},
      {"metadata.name In other", {{"metadata.name", "In", {"n2"}}}, false},
      {"metadata.name NotIn", {{"metadata.name", "NotIn", {"n2"}}}, true},
      {"metadata.name NotIn self", {{"metadata.name", "NotIn", {"n1"}}}, false},
      {"two values are invalid", {{"metadata.name", "In", {"n1", "n2"}}}, false},
      {"other field is invalid", {{"metadata.uid", "In", {"n1"}}}, false},
      {"Exists is not supported for fields", {{"metadata.name", "Exists", {}}}, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(term_of({}, r.fields).matches(label_map(), "n1"), r.want);
  }
  // Expressions and fields are ANDed.
  EXPECT_FALSE(term_of({{"zone", "Exists", {}}}, {{"metadata.name", "In", {"n1"}}}).matches(label_map(), "n1"));
}

TEST(NodeSelector, EmptyTermMatchesNothingAndTermsAreOred) {
  EXPECT_FALSE(term_of({}).matches(test::labels({{"a", "b"}}), "n1"));
  node_selector sel;
  EXPECT_FALSE(sel.matches(label_map(), "n1"));  // no terms
  sel.terms.push_back(term_of({}));
  sel.terms.push_back(term_of({{"zone", "In", {"x"}}}));
  EXPECT_FALSE(sel.matches(test::labels({{"zone", "a"}}), "n1"));
  sel.terms.push_back(term_of({{"zone", "In", {"a"}}}));
  EXPECT_TRUE(sel.matches(test::labels({{"zone", "a"}}), "n1"));
}

TEST(NodeSelector, InvalidTermDoesNotSpoilOthers) {
  k8s::core::NodeSelector ns;
  auto* bad = ns.add_node_selector_terms()->add_match_expressions();
  bad->set_key("cpus");
  bad->set_operator_("Gt");
  bad->add_values("many");
  auto* good = ns.add_node_selector_terms()->add_match_expressions();
  good->set_key("zone");
  good->set_operator_("Exists");
  auto sel = compile_node_selector(ns, "spec");
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(sel->terms[0].match_expressions[0].invalid);
  EXPECT_TRUE(sel->matches(test::labels({{"zone", "a"}, {"cpus", "9"}}), "n"));
  EXPECT_FALSE(sel->matches(test::labels({{"cpus", "9"}}), "n"));
}

TEST(LabelSelector, Matching) {
  struct row {
    const char* name;
    std::function<void(k8s::meta::LabelSelector*)> build;
    bool want;
  };
  const label_map pod({{"app", "web"}, {"tier", "front"}});
  auto add = [](k8s::meta::LabelSelector* s, const std::string& k, const std::string& op,
                std::vector<std::string> vs) {
    auto* e = s->add_match_expressions();
    e->set_key(k);
    e->set_operator_(op);
    for (auto& v : vs) e->add_values(v);
  };
  const row rows[] = {
      {"empty selector matches everything", [](auto*) {}, true},
      {"matchLabels hit", [](auto* s) { (*s->mutable_match_labels())["app"] = "web"; }, true},
      {"matchLabels miss", [](auto* s) { (*s->mutable_match_labels())["app"] = "db"; }, false},
      {"In", [&](auto* s) { add(s, "tier", "In", {"front", "back"}); }, true},
      {"NotIn", [&](auto* s) { add(s, "tier", "NotIn", {"front"}); }, false},
      {"Exists", [&](auto* s) { add(s, "app", "Exists", {}); }, true},
      {"DoesNotExist", [&](auto* s) { add(s, "app", "DoesNotExist", {}); }, false},
      {"labels and expressions ANDed",
       [&](auto* s) {
         (*s->mutable_match_labels())["app"] = "web";
         add(s, "tier", "DoesNotExist", {});
       },
       false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    k8s::meta::LabelSelector ls;
    r.build(&ls);
    auto sel = compile_label_selector(&ls, "selector");
    ASSERT_TRUE(sel.ok()) << sel.err().message;
    EXPECT_EQ(sel->matches(pod), r.want);
  }
  auto nil = compile_label_selector(nullptr, "selector");
  ASSERT_TRUE(nil.ok());
  EXPECT_FALSE(nil->matches(pod));

  k8s::meta::LabelSelector bad;
  add(&bad, "app", "Gt", {"1"});
  auto err = compile_label_selector(&bad, "spec.selector");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.err().message.rfind("spec.selector.matchExpressions[0].operator: Invalid value: \"Gt\"", 0), 0u)
      << err.err().message;
}

}  // namespace
}  // namespace kas
