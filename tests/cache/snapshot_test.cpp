#include <gtest/gtest.h>

#include "builders.hpp"
#include "cache/snapshot.hpp"

namespace kas {
namespace {

node_info_ptr named(const std::string& name) {
  auto n = std::make_shared<node_info>();
  n->name = name;
  return n;
}

snapshot build(size_t count) {
  snapshot s;
  for (size_t i = 0; i < count; ++i) s = s.with_added_node(named("n" + std::to_string(i)), i + 1);
  return s;
}

TEST(Snapshot, AddAndFind) {
  snapshot s = build(200);
  EXPECT_EQ(s.size(), 200u);
  EXPECT_EQ(s.generation(), 200u);
  for (size_t i = 0; i < 200; ++i) {
    EXPECT_EQ(s.index_of("n" + std::to_string(i)), static_cast<long>(i));
    EXPECT_EQ(s.node(i).name, "n" + std::to_string(i));
  }
  EXPECT_EQ(s.index_of("nope"), -1);
  EXPECT_EQ(s.find("nope"), nullptr);
  ASSERT_NE(s.find("n150"), nullptr);
  EXPECT_EQ(s.find("n150")->name, "n150");
}

TEST(Snapshot, WithNodeSharesEveryOtherChunk) {
  const snapshot before = build(200);  // chunks: [0,64) [64,128) [128,192) [192,200)
  auto changed = named("n70");
  snapshot after = before.with_node(70, changed, 999);
  EXPECT_EQ(after.generation(), 999u);
  EXPECT_EQ(after.node_ptr(70), changed);
  for (size_t i = 0; i < before.size(); ++i) {
    // Untouched nodes are the very same objects.
    if (i != 70) {
      EXPECT_EQ(after.node_ptr(i), before.node_ptr(i)) << i;
    }
    // Chunk identity: the address of a slot is shared iff its chunk is.
    const bool same_chunk = i / snapshot::chunk_size != 70 / snapshot::chunk_size;
    EXPECT_EQ(&after.node_ptr(i) == &before.node_ptr(i), same_chunk) << i;
  }
  // The old snapshot is unchanged.
  EXPECT_NE(before.node_ptr(70), changed);
  EXPECT_EQ(before.generation(), 200u);
  EXPECT_EQ(before.node(70).name, "n70");
}

TEST(Snapshot, SetNodeChangesUnsharedChunksInPlaceAndNeverAPublishedCopy) {
  snapshot working = build(200);
  const snapshot published = working;  // a copy handed out: shares every chunk
  auto first = named("n70");
  working.set_node(70, first, 300);
  // The shared chunk was copied: the published copy still has the old node, in its own slot.
  EXPECT_EQ(working.node_ptr(70), first);
  EXPECT_NE(published.node_ptr(70), first);
  EXPECT_EQ(published.generation(), 200u);
  EXPECT_EQ(working.generation(), 300u);
  EXPECT_NE(&working.node_ptr(70), &published.node_ptr(70));
  EXPECT_EQ(&working.node_ptr(0), &published.node_ptr(0)) << "other chunks stay shared";
  // Now the chunk is the working copy's alone: the next change is made where it is.
  const node_info_ptr* slot = &working.node_ptr(71);
  auto second = named("n71");
  working.set_node(71, second, 301);
  EXPECT_EQ(&working.node_ptr(71), slot);
  EXPECT_EQ(working.node_ptr(71), second);
  EXPECT_EQ(published.node(71).name, "n71");
  EXPECT_NE(published.node_ptr(71), second);
  // A renamed node moves in the index of the working copy only.
  working.set_node(72, named("renamed"), 302);
  EXPECT_EQ(working.index_of("renamed"), 72);
  EXPECT_EQ(working.index_of("n72"), -1);
  EXPECT_EQ(published.index_of("n72"), 72);
  EXPECT_EQ(published.index_of("renamed"), -1);
}

TEST(Snapshot, AddedNodeCopiesOnlyTheTailChunk) {
  const snapshot before = build(100);
  snapshot after = before.with_added_node(named("extra"), 101);
  EXPECT_EQ(after.size(), 101u);
  EXPECT_EQ(before.size(), 100u);
  EXPECT_EQ(before.index_of("extra"), -1);
  EXPECT_EQ(after.index_of("extra"), 100);
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(&after.node_ptr(i), &before.node_ptr(i));
  EXPECT_NE(&after.node_ptr(64), &before.node_ptr(64));
}

TEST(Snapshot, WithoutNodeMovesTheLastIntoTheHole) {
  const snapshot before = build(130);
  snapshot after = before.without_node("n5", 500);
  EXPECT_EQ(after.size(), 129u);
  EXPECT_EQ(after.index_of("n5"), -1);
  EXPECT_EQ(after.index_of("n129"), 5);
  EXPECT_EQ(after.node_ptr(5), before.node_ptr(129));
  // The middle chunk is untouched; the last chunk (one node) disappeared.
  for (size_t i = 64; i < 128; ++i) EXPECT_EQ(&after.node_ptr(i), &before.node_ptr(i));
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after.index_of(after.node(i).name), static_cast<long>(i));
  // Old snapshot intact.
  EXPECT_EQ(before.size(), 130u);
  EXPECT_EQ(before.index_of("n5"), 5);

  snapshot last_removed = after.without_node("n128", 501);
  EXPECT_EQ(last_removed.size(), 128u);
  EXPECT_EQ(last_removed.index_of("n128"), -1);
  snapshot unknown = last_removed.without_node("zzz", 502);
  EXPECT_EQ(unknown.size(), 128u);

  snapshot emptied = build(1).without_node("n0", 2);
  EXPECT_EQ(emptied.size(), 0u);
  emptied = emptied.with_added_node(named("again"), 3);
  EXPECT_EQ(emptied.index_of("again"), 0);
}

}  // namespace
}  // namespace kas

namespace kas {
namespace {

node_info_ptr with_images(const std::string& name, std::vector<std::string> images) {
  auto n = std::make_shared<node_info>();
  n->name = name;
  for (auto& i : images) n->images.push_back(image_state{i, 100, intern_image_name(i)});
  return n;
}

TEST(Snapshot, ImageNodeCountsFollowNodes) {
  snapshot s;
  s = s.with_added_node(with_images("n0", {"a:1", "b:1"}), 1);
  s = s.with_added_node(with_images("n1", {"a:1"}), 2);
  const snapshot before = s.with_added_node(with_images("n2", {}), 3);
  EXPECT_EQ(before.image_num_nodes("a:1"), 2);
  EXPECT_EQ(before.image_num_nodes("b:1"), 1);
  EXPECT_EQ(before.image_num_nodes("c:1"), 0);
  // A node update that changes its images.
  snapshot updated = before.with_node(1, with_images("n1", {"c:1"}), 4);
  EXPECT_EQ(updated.image_num_nodes("a:1"), 1);
  EXPECT_EQ(updated.image_num_nodes("c:1"), 1);
  EXPECT_EQ(before.image_num_nodes("a:1"), 2) << "earlier snapshots keep their counts";
  // Removing a node drops its images.
  snapshot removed = updated.without_node("n0", 5);
  EXPECT_EQ(removed.image_num_nodes("a:1"), 0);
  EXPECT_EQ(removed.image_num_nodes("b:1"), 0);
  EXPECT_EQ(removed.image_num_nodes("c:1"), 1);
}

}  // namespace
}  // namespace kas
