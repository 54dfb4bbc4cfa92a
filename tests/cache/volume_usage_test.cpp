// node_info::volume_usage as the scheduler cache keeps it: after every change of a random history of
// pods and storage objects, each node's kept usage equals a resolution from scratch of the node's
// pods against the snapshot's objects (what NodeVolumeLimits would compute without the cache).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "cache/attachable_volumes.hpp"
#include "cache/scheduler_cache.hpp"
#include "tests/cache/builders.hpp"

namespace kas::test {
namespace {

std::string describe(const node_volume_usage* u) {
  if (!u) return "none";
  std::ostringstream o;
  o << "csinode=" << (u->csi_node ? u->csi_node->name : "-") << " limits=";
  for (const auto& l : u->limits) o << l.driver << ':' << l.attached << '/' << l.limit << ',';
  // In name order: the pods' order on a node is not semantic (removals swap the last pod in).
  std::vector<std::string> volumes;
  for (const auto& v : u->volumes) volumes.push_back(v.driver + '|' + v.handle + (v.unbound_claim ? "(unbound)" : ""));
  std::sort(volumes.begin(), volumes.end());
  o << " volumes=";
  for (const auto& v : volumes) o << v << ',';
  if (u->failure) o << " failure=" << u->failure->message;
  o << " read=";
  for (const auto& k : u->read) o << k << ',';
  return o.str();
}

// Every node of the cache's snapshot whose usage the cache calls current: the kept usage must be
// what a resolution from scratch gives.
void expect_current(scheduler_cache& c, const std::string& step) {
  auto snap = c.current();
  for (size_t i = 0; i < snap->size(); ++i) {
    const node_info& n = snap->node(i);
    ASSERT_TRUE(n.volume_usage_current) << step << ": " << n.name;
    auto fresh = volume_usage_of(n.name, n.pods, snap->objects().volumes);
    ASSERT_EQ(describe(n.volume_usage.get()), describe(fresh.get())) << step << ": node " << n.name;
    ASSERT_EQ(n.has_csi_node, fresh && fresh->csi_node) << step << ": node " << n.name;
  }
}

pv_info_ptr csi_pv(const std::string& name, const std::string& driver, const std::string& handle) {
  auto pv = std::make_shared<pv_info>();
  pv->name = name;
  pv->source.kind = volume_source::csi;
  pv->source.driver = driver;
  pv->source.id = handle;
  return pv;
}

pv_info_ptr ebs_pv(const std::string& name, const std::string& id) {
  auto pv = std::make_shared<pv_info>();
  pv->name = name;
  pv->source.kind = volume_source::aws_ebs;
  pv->source.id = id;
  return pv;
}

pvc_info_ptr claim(const std::string& name, const std::string& volume, const std::string& cls) {
  auto c = std::make_shared<pvc_info>();
  c->ns = "ns";
  c->name = name;
  c->volume_name = volume;
  c->storage_class = cls;
  return c;
}

storage_class_info_ptr storage_class(const std::string& name, const std::string& provisioner) {
  auto sc = std::make_shared<storage_class_info>();
  sc->name = name;
  sc->provisioner = provisioner;
  return sc;
}

csi_node_info_ptr csi_node(const std::string& node, int32_t limit) {
  auto n = std::make_shared<csi_node_info>();
  n->name = node;
  for (const char* d : {"d1.csi", "d2.csi", "ebs.csi.aws.com"}) {
    csi_node_driver drv;
    drv.name = d;
    drv.allocatable_count = limit;
    n->drivers.push_back(drv);
  }
  return n;
}

volume_attachment_info_ptr attachment(const std::string& name, const std::string& node, const std::string& pv) {
  auto a = std::make_shared<volume_attachment_info>();
  a->name = name;
  a->attacher = "d1.csi";
  a->node_name = node;
  a->pv_name = pv;
  return a;
}

pod_info_ptr pod_with(const std::string& name, const std::vector<std::string>& claims, bool inline_ebs) {
  auto p = std::make_shared<pod_info>();
  p->name = name;
  p->ns = "ns";
  p->uid = "uid-" + name;
  for (const auto& cl : claims) {
    pod_volume v;
    v.name = "v-" + cl;
    v.claim_name = cl;
    p->volumes.push_back(v);
  }
  if (inline_ebs) {
    pod_volume v;
    v.name = "disk";
    v.inline_source.kind = volume_source::aws_ebs;
    v.inline_source.id = "vol-" + name;
    p->volumes.push_back(v);
  }
  return p;
}

pod_info_ptr on_node(const pod_info_ptr& p, const std::string& node) {
  auto q = std::make_shared<pod_info>(*p);
  q->node_name = node;
  return q;
}

TEST(NodeVolumeUsage, KeptUsageEqualsAFreshResolutionOverRandomHistories) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    scheduler_cache c;
    const std::vector<std::string> nodes = {"n0", "n1", "n2", "n3"};
    for (const auto& n : nodes) c.add_or_update_node(simple_node(n));
    std::vector<std::string> claims, volumes;
    for (int i = 0; i < 8; ++i) claims.push_back("c" + std::to_string(i));
    for (int i = 0; i < 8; ++i) volumes.push_back("pv" + std::to_string(i));
    std::map<std::string, pod_info_ptr> placed;  // uid -> the placed pod
    int next_pod = 0;
    for (int step = 0; step < 300; ++step) {
      std::string what;
      switch (pick(11)) {
        case 0: case 1: {  // a pod with claims (some missing) and maybe an inline disk, placed
          std::vector<std::string> cs;
          for (size_t k = pick(3); k > 0; --k) cs.push_back(claims[pick(claims.size())]);
          auto p = on_node(pod_with("p" + std::to_string(next_pod++), cs, pick(4) == 0), nodes[pick(nodes.size())]);
          if (pick(2))
            ASSERT_TRUE(c.add_pod(p).ok());
          else
            ASSERT_TRUE(c.assume_pod(p, p->node_name).ok());
          placed[p->uid] = p;
          what = "place " + p->name;
          break;
        }
        case 2: {  // a pod leaves
          if (placed.empty()) continue;
          auto it = std::next(placed.begin(), static_cast<long>(pick(placed.size())));
          if (c.is_assumed(it->first))
            ASSERT_TRUE(c.forget_pod(it->first).ok());
          else
            ASSERT_TRUE(c.remove_pod(it->second).ok());
          what = "remove " + it->second->name;
          placed.erase(it);
          break;
        }
        case 3: case 4: {  // a claim appears, binds, unbinds or goes
          const auto& name = claims[pick(claims.size())];
          pvc_info_ptr before = c.current()->objects().volumes.pvcs.get("ns/" + name);
          pvc_info_ptr after;
          if (pick(5) != 0)
            after = claim(name, pick(2) ? volumes[pick(volumes.size())] : "", pick(3) ? "fast" : "");
          if (!before && !after) continue;
          c.apply_volume(pvc_change(before, after));
          what = "claim " + name;
          break;
        }
        case 5: case 6: {  // a volume appears, changes driver, or goes
          const auto& name = volumes[pick(volumes.size())];
          auto before = c.current()->objects().volumes.pvs.get(name);
          pv_info_ptr after;
          switch (pick(4)) {
            case 0: break;
            case 1: after = ebs_pv(name, "vol-" + name); break;
            default: after = csi_pv(name, pick(2) ? "d1.csi" : "d2.csi", "h-" + std::to_string(pick(5)));
          }
          if (!before && !after) continue;
          c.apply_volume(pv_change(before, after));
          what = "volume " + name;
          break;
        }
        case 7: {  // the class changes provisioner or goes
          auto before = c.current()->objects().volumes.classes.get("fast");
          auto after = pick(3) ? storage_class("fast", pick(2) ? "d2.csi" : "kubernetes.io/aws-ebs") : nullptr;
          if (!before && !after) continue;
          c.apply_volume(storage_class_change(before, after));
          what = "class";
          break;
        }
        case 8: {  // a CSINode appears, changes its limits or goes
          const auto& node = nodes[pick(nodes.size())];
          auto before = c.current()->objects().volumes.csi_nodes.get(node);
          auto after = pick(4) ? csi_node(node, static_cast<int32_t>(1 + pick(4))) : nullptr;
          if (!before && !after) continue;
          c.apply_volume(csi_node_change(before, after));
          what = "csinode " + node;
          break;
        }
        case 9: {  // a node goes (its pods stay, on a ghost) or comes back
          const auto& node = nodes[pick(nodes.size())];
          if (c.node(node)) {
            c.remove_node(node);
            what = "remove node " + node;
          } else {
            c.add_or_update_node(simple_node(node));
            what = "add node " + node;
          }
          break;
        }
        default: {  // an attachment appears, moves or goes
          std::string name = "va" + std::to_string(pick(4));
          auto before = c.current()->objects().volumes.attachments.get(name);
          auto after = pick(3) ? attachment(name, nodes[pick(nodes.size())], volumes[pick(volumes.size())]) : nullptr;
          if (!before && !after) continue;
          c.apply_volume(volume_attachment_change(before, after));
          what = "attachment " + name;
        }
      }
      expect_current(c, "seed " + std::to_string(seed) + " step " + std::to_string(step) + " (" + what + ")");
      if (HasFatalFailure()) return;
    }
  }
}

// A node copy changed outside the cache (a preemption what-if) no longer claims its kept usage is
// current, so readers resolve its pods themselves.
TEST(NodeVolumeUsage, ACopyChangedOutsideTheCacheIsNotCurrent) {
  scheduler_cache c;
  c.add_or_update_node(simple_node("n1"));
  c.apply_volume(csi_node_change(nullptr, csi_node("n1", 2)));
  ASSERT_TRUE(c.add_pod(on_node(pod_with("a", {"c0"}, false), "n1")).ok());
  auto snap = c.current();
  const node_info* n = snap->find("n1");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->volume_usage_current);
  ASSERT_TRUE(n->volume_usage);
  auto copy = n->clone();
  copy->add_pod(on_node(pod_with("b", {}, false), "n1"));
  EXPECT_TRUE(copy->volume_usage_current) << "a pod without volumes changes nothing counted";
  copy->add_pod(on_node(pod_with("c", {"c1"}, false), "n1"));
  EXPECT_FALSE(copy->volume_usage_current);
  auto copy2 = n->clone();
  ASSERT_TRUE(copy2->remove_pod("uid-a"));
  EXPECT_FALSE(copy2->volume_usage_current);
}

}  // namespace
}  // namespace kas::test
