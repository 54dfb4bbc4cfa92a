// JSON text edits (json_edit.hpp) and the binding write built on them (store_bind.cpp).
#include <gtest/gtest.h>

#include "tests/apiserver/json_edit.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {
namespace {

TEST(JsonEdit, ReplacesInPlaceAndAddsMissingMembersAndParents) {
  json_doc doc;
  ASSERT_TRUE(doc.parse(R"({"a":1,"metadata":{"name":"p","labels":{"x":"y"}},"n":[1.5,true,null,"s\"q"],"spec":"old"})"));
  std::string out = edit_json(doc.root(), {{{"metadata", "name"}, "\"q\""},
                                           {{"metadata", "annotations", "example.com/key.with.dots"}, "\"v\""},
                                           {{"spec", "nodeName"}, "\"n1\""},
                                           {{"status", "phase"}, "\"Pending\""}});
  EXPECT_EQ(out, R"({"a":1,"metadata":{"name":"q","labels":{"x":"y"},"annotations":{"example.com/key.with.dots":"v"}},)"
                 R"("n":[1.5,true,null,"s\"q"],"spec":{"nodeName":"n1"},"status":{"phase":"Pending"}})");
  EXPECT_FALSE(doc.parse("[1]"));
  EXPECT_FALSE(doc.parse("{"));
}

TEST(JsonEdit, BindingKeepsOtherConditionsAndAddsAnnotations) {
  store s;
  const kind_info& pods = *find_kind("", "v1", "pods");
  ASSERT_TRUE(s.create(pods, "default", *parse_json_object(R"({"metadata":{"name":"p","labels":{"app":"w"}}})")).ok());
  ASSERT_TRUE(s.patch(pods, "default", "p", patch_kind::strategic,
                      *parse_json_object(R"({"status":{"conditions":[{"type":"PodScheduled","status":"False"},
                                              {"type":"Ready","status":"False"}]}})"), true).ok());
  auto b = parse_binding(R"({"metadata":{"name":"p","annotations":{"a.io/b":"c"}},"target":{"name":"n1"}})", false);
  ASSERT_TRUE(b) << b.err().message;
  auto r = s.bind("default", "p", *b);
  ASSERT_TRUE(r.ok()) << r.err.message;
  YAML::Node t = (*r.value)->tree();
  EXPECT_EQ(string_at(t, "spec.nodeName"), "n1");
  EXPECT_EQ(string_at(t, "metadata.resourceVersion"), std::to_string((*r.value)->rv));
  EXPECT_EQ(t["metadata"]["annotations"]["a.io/b"].Scalar(), "c");
  ASSERT_EQ(t["status"]["conditions"].size(), 2u);
  EXPECT_EQ(t["status"]["conditions"][0]["type"].Scalar(), "Ready");
  EXPECT_EQ(t["status"]["conditions"][1]["type"].Scalar(), "PodScheduled");
  EXPECT_EQ(t["status"]["conditions"][1]["status"].Scalar(), "True");
  EXPECT_EQ((*r.value)->field("spec.nodeName"), "n1");
  EXPECT_EQ((*r.value)->labels.at("app"), "w");
  list_request lr;
  lr.field_selector = "spec.nodeName=n1";
  EXPECT_EQ(s.list(pods, "", lr).value->items.size(), 1u);
  EXPECT_FALSE(parse_binding(R"({"metadata":{"annotations":{"a":1}},"target":{"name":"n1"}})", false));
}

}  // namespace
}  // namespace kas::testapi
