// VolumeBinding's check of a bound in-tree PV on a node where its plugin is migrated to CSI (kube's
// tryTranslatePVToCSI in checkBoundClaims), and the topology translation it relies on
// (csi-translation-lib's translateTopologyFromInTreeToCSI).
#include <gtest/gtest.h>

#include "cache/cluster_objects.hpp"
#include "cache/csi_translation.hpp"
#include "messages/k8s/storage.pb.h"
#include "plugins/volume_binding/binder.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

pv_info_ptr pv(const std::string& yaml) {
  auto r = compile_pv(test::decode<k8s::core::PersistentVolume>(yaml, "pv"));
  if (!r) throw std::runtime_error(r.err().message);
  return *r;
}

// The node affinity as "key op [values] & ... | ...", or "none".
std::string describe(const std::optional<node_selector>& s) {
  if (!s) return "none";
  std::string out;
  for (size_t t = 0; t < s->terms.size(); ++t) {
    if (t) out += " | ";
    const auto& exprs = s->terms[t].match_expressions;
    for (size_t i = 0; i < exprs.size(); ++i) {
      if (i) out += " & ";
      out += exprs[i].key + " [";
      for (size_t v = 0; v < exprs[i].values.size(); ++v) out += (v ? "," : "") + exprs[i].values[v];
      out += "]";
    }
  }
  return out;
}

std::string affinity_yaml(const std::string& key, const std::string& values) {
  return "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: " + key +
         ", operator: In, values: [" + values + "]}]}]}}\n";
}

TEST(CSITranslation, TopologyFromInTreeToCSI) {
  const std::string ebs_key = "topology.ebs.csi.aws.com/zone";
  struct tc {
    const char* name;
    std::string yaml;
    std::string want;
  } cases[] = {
    {"GA zone in the affinity moves to the CSI key",
     "metadata: {name: p}\nspec:\n  awsElasticBlockStore: {volumeID: vol-1}\n" +
       affinity_yaml("topology.kubernetes.io/zone", "us-east-1a, us-east-1b"),
     ebs_key + " [us-east-1a,us-east-1b]"},
    {"beta zone moves too, and the beta region becomes GA",
     "metadata: {name: p}\nspec:\n  awsElasticBlockStore: {volumeID: vol-1}\n"
     "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: ["
     "{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [us-east-1a]},"
     "{key: failure-domain.beta.kubernetes.io/region, operator: In, values: [us-east-1]}]}]}}\n",
     ebs_key + " [us-east-1a] & topology.kubernetes.io/region [us-east-1]"},
    {"no affinity: the zone label's zones, trimmed and sorted, become one",
     "metadata: {name: p, labels: {topology.kubernetes.io/zone: us-east-1b__us-east-1a}}\n"
     "spec: {awsElasticBlockStore: {volumeID: vol-1}}",
     ebs_key + " [us-east-1a,us-east-1b]"},
    {"an affinity without a zone gets the label's zone in every term",
     "metadata: {name: p, labels: {failure-domain.beta.kubernetes.io/zone: us-east-1a}}\n"
     "spec:\n  awsElasticBlockStore: {volumeID: vol-1}\n"
     "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r1]}]},"
     "{matchExpressions: [{key: rack, operator: In, values: [r2]}]}]}}\n",
     "rack [r1] & " + ebs_key + " [us-east-1a] | rack [r2] & " + ebs_key + " [us-east-1a]"},
    {"nothing to translate", "metadata: {name: p}\nspec: {awsElasticBlockStore: {volumeID: vol-1}}", "none"},
    {"GCE PD moves to topology.gke.io/zone",
     "metadata: {name: p}\nspec:\n  gcePersistentDisk: {pdName: d}\n" +
       affinity_yaml("topology.kubernetes.io/zone", "us-central1-a"),
     "topology.gke.io/zone [us-central1-a]"},
    {"Azure Disk's translation keeps the topology",
     "metadata: {name: p}\nspec:\n  azureDisk: {diskName: d, diskURI: /d}\n" +
       affinity_yaml("topology.kubernetes.io/zone", "westus-1"),
     "none"},
    {"a CSI PV is not translated",
     "metadata: {name: p}\nspec:\n  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n" +
       affinity_yaml("topology.kubernetes.io/zone", "us-east-1a"),
     "none"},
  };
  for (const auto& c : cases) EXPECT_EQ(describe(pv(c.yaml)->csi_node_affinity), c.want) << c.name;
}

// kube's TestFindPodVolumesWithCSIMigration, for bound claims: the translated affinity decides
// where the node's CSINode lists the plugin as migrated, the in-tree one elsewhere.
TEST(VolumeBinding, BoundInTreeVolumeOnMigratedNodes) {
  struct tc {
    const char* name;
    std::string volume_id;
    std::string node_labels;
    bool csi_node;
    std::string want;  // Success, the conflict reason, or the error text
    bool annotated = true;  // the CSINode lists kubernetes.io/aws-ebs as migrated
  } cases[] = {
    {"a CSINode that does not list the plugin keeps the in-tree check", "vol-1",
     "{topology.kubernetes.io/zone: us-east-1a}", true, "Success", false},
    {"... and does not accept the CSI label", "vol-1", "{topology.ebs.csi.aws.com/zone: us-east-1a}", true,
     std::string(err_reason_node_conflict), false},
    {"migrated node with the CSI zone label", "vol-1", "{topology.ebs.csi.aws.com/zone: us-east-1a}", true, "Success"},
    {"migrated node with only the GA zone label", "vol-1", "{topology.kubernetes.io/zone: us-east-1a}", true,
     std::string(err_reason_node_conflict)},
    {"node without CSINode keeps the in-tree check", "vol-1", "{topology.kubernetes.io/zone: us-east-1a}", false,
     "Success"},
    {"node without CSINode and only the CSI label", "vol-1", "{topology.ebs.csi.aws.com/zone: us-east-1a}", false,
     std::string(err_reason_node_conflict)},
    {"an id the translation rejects", "aws://us-east-1a/bad", "{topology.ebs.csi.aws.com/zone: us-east-1a}", true,
     "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
     "(aws://us-east-1a/bad)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    cluster_objects objs;
    auto volume = pv("metadata: {name: pv-1}\nspec:\n  awsElasticBlockStore: {volumeID: \"" + c.volume_id +
                     "\"}\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: sc\n"
                     "  claimRef: {namespace: default, name: data}\n" +
                     affinity_yaml("topology.kubernetes.io/zone", "us-east-1a") + "status: {phase: Bound}\n");
    objs.volumes.pvs.put(volume->name, volume);
    auto claim = compile_pvc(test::decode<k8s::core::PersistentVolumeClaim>(
      "metadata: {name: data, namespace: default, annotations: {pv.kubernetes.io/bind-completed: \"yes\"}}\n"
      "spec: {storageClassName: sc, volumeName: pv-1, accessModes: [ReadWriteOnce]}\nstatus: {phase: Bound}\n"));
    ASSERT_TRUE(claim.ok());
    objs.volumes.pvcs.put((*claim)->key(), *claim);
    if (c.csi_node) {
      std::string annotations =
        c.annotated ? ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: \"kubernetes.io/gce-pd,kubernetes.io/aws-ebs\"}"
                    : "";
      auto n = compile_csi_node(test::decode<k8s::storage::CSINode>(
        "metadata: {name: node1" + annotations + "}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: i-1}]}"));
      ASSERT_TRUE(n.ok());
      objs.volumes.csi_nodes.put("node1", *n);
    }
    auto pod = test::pod_from_yaml(
      "metadata: {name: p, namespace: default, uid: u}\nspec:\n  containers: [{name: c}]\n"
      "  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]\n");
    auto node = test::node_from_yaml("metadata: {name: node1, labels: " + c.node_labels + "}");
    auto claims = get_pod_volume_claims(*pod, objs.volumes);
    pod_volumes out;
    auto st = find_pod_volumes(*pod, claims, *node, objs.volumes, out);
    if (c.want == "Success") {
      EXPECT_TRUE(st.is_success()) << st.message();
    } else if (st.get_code() == fw::code::error) {
      EXPECT_EQ(st.message(), c.want);
    } else {
      EXPECT_EQ(test::reasons(st), c.want);
    }
  }
}

}  // namespace
}  // namespace kas::plugins
