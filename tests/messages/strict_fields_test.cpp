// Strict field checking (messages/schema/strict_fields.hpp): the generated schema must know every
// field of the real apiserver fixtures (so a clean manifest is never flagged), and typos must come
// back with the path the apiserver's strict decoding would name.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "messages/schema/strict_fields.hpp"

namespace {

namespace fs = std::filesystem;
using kas::schema::schema_type;
using kas::schema::strict_limits;
using kas::schema::unknown_fields;
using paths = std::vector<std::string>;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string scalar(const YAML::Node& map, const char* key) {
  if (!map.IsMap()) return {};
  const YAML::Node& const_map = map;  // const operator[]: never adds the key
  YAML::Node v = const_map[key];
  return v.IsDefined() && v.IsScalar() ? v.Scalar() : std::string{};
}

// Unknown fields of a one-document YAML (or JSON) text, by the object's own apiVersion and kind.
paths check(const std::string& text) {
  YAML::Node n = YAML::Load(text);
  auto r = unknown_fields(n, scalar(n, "apiVersion"), scalar(n, "kind"));
  EXPECT_TRUE(r.ok()) << r.err().message;
  return r.ok() ? *r : paths{"<error>"};
}

// ---- The real apiserver fixtures: every field is filled, so none may be unknown ----

struct fixture {
  std::string dir;   // v1.36.0 or HEAD
  std::string file;  // core.v1.Pod.yaml
  std::string api_version, kind;
};

void PrintTo(const fixture& f, std::ostream* os) { *os << f.dir << "/" << f.file; }

// "scheduling.k8s.io.v1beta1.PodGroup.yaml" -> scheduling.k8s.io/v1beta1, PodGroup ("core" -> v1):
// the WatchEvent fixture has no apiVersion/kind of its own.
std::vector<fixture> fixtures() {
  std::vector<fixture> out;
  for (const char* dir : {"v1.36.0", "HEAD"}) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(fs::path(KAS_FIXTURES_DIR) / dir)) {
      std::string ext = e.path().extension().string();
      if (ext == ".yaml" || ext == ".json") files.push_back(e.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string stem = f.substr(0, f.rfind('.'));
      auto k = stem.rfind('.');
      auto v = stem.rfind('.', k - 1);
      std::string group = stem.substr(0, v), version = stem.substr(v + 1, k - v - 1);
      out.push_back({dir, f, group == "core" ? version : group + "/" + version, stem.substr(k + 1)});
    }
  }
  return out;
}

std::string fixture_name(const testing::TestParamInfo<fixture>& info) {
  std::string n = info.param.dir + "_" + info.param.file;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

class StrictFixture : public testing::TestWithParam<fixture> {
protected:
  YAML::Node load() const { return YAML::Load(slurp(fs::path(KAS_FIXTURES_DIR) / GetParam().dir / GetParam().file)); }
};

// Fields of a fixture that the TSV (the HEAD snapshot, about v1.37) no longer has. v1.36's alpha
// PodStatus.nodeAllocatableResourceClaimStatuses[].resources (a map, proto field 3) was replaced at HEAD
// by `mapping` and `overhead` (fields 4 and 5).
paths known_unknown(const fixture& f) {
  if (f.dir == "v1.36.0" && f.kind == "Pod") return {"status.nodeAllocatableResourceClaimStatuses[0].resources"};
  return {};
}

TEST_P(StrictFixture, HasNoUnknownField) {
  const fixture& f = GetParam();
  ASSERT_FALSE(schema_type(f.api_version, f.kind).empty()) << f.api_version << " " << f.kind;
  YAML::Node n = load();
  std::string kind = scalar(n, "kind");
  if (!kind.empty()) {
    EXPECT_EQ(kind, f.kind);
  }
  auto r = unknown_fields(n, f.api_version, f.kind);
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_EQ(*r, known_unknown(f));
}

// The fields of map type and the free-form values in the fixtures, by the last key of their path:
// an unknown key there is no typo.
const std::set<std::string> free_form = {
  "labels", "annotations", "fieldsV1", "nodeSelector", "overhead", "limits", "requests",
  "allocatedResources", "allocatedResourceStatuses", "volumeAttributes", "options", "capacity",
  "allocatable", "matchLabels", "parameters", "disruptedPods", "attachmentMetadata", "userAnnotations",
  "data", "binaryData", "stringData", "hard", "used",
};

std::string last_key(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// Every object of the fixture (a mapping not in `free_form`, nor under a known unknown field), found
// by walking the YAML itself.
void collect_objects(YAML::Node n, const std::string& path, const paths& skip,
                     std::vector<std::pair<std::string, YAML::Node>>& out) {
  if (std::find(skip.begin(), skip.end(), path) != skip.end()) return;
  if (n.IsMap()) {
    if (free_form.count(last_key(path)) || path == "object") return;  // WatchEvent.object: any kind
    out.emplace_back(path, n);
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node key = it->first;
      YAML::Node value = it->second;
      collect_objects(value, path.empty() ? key.Scalar() : path + "." + key.Scalar(), skip, out);
    }
  } else if (n.IsSequence()) {
    std::size_t i = 0;
    for (auto it = n.begin(); it != n.end(); ++it, ++i) collect_objects(*it, path + "[" + std::to_string(i) + "]", skip, out);
  }
}

// The schema reaches everywhere: a key added to every object of the fixture is reported at each.
TEST_P(StrictFixture, ReportsAKeyAddedToEveryObject) {
  const fixture& f = GetParam();
  YAML::Node n = load();
  std::vector<std::pair<std::string, YAML::Node>> objects;
  const paths skip = known_unknown(f);
  collect_objects(n, "", skip, objects);
  std::set<std::string> expected(skip.begin(), skip.end());
  for (auto& [path, obj] : objects) {
    obj["zzUnknown"] = "x";
    expected.insert(path.empty() ? "zzUnknown" : path + ".zzUnknown");
  }
  auto r = unknown_fields(n, f.api_version, f.kind);
  ASSERT_TRUE(r.ok()) << r.err().message;
  std::set<std::string> got(r->begin(), r->end());
  EXPECT_EQ(got.size(), r->size()) << "a path reported twice";
  EXPECT_EQ(got, expected);
  if (f.kind == "Pod") {
    EXPECT_GT(expected.size(), 100u);
  }
}

INSTANTIATE_TEST_SUITE_P(K8sApi, StrictFixture, testing::ValuesIn(fixtures()), fixture_name);

TEST(StrictFields, FixturesAreFound) {
  auto all = fixtures();
  EXPECT_GE(all.size(), 40u);
  auto has = [&](const std::string& file) {
    return std::any_of(all.begin(), all.end(), [&](const fixture& f) { return f.dir == "v1.36.0" && f.file == file; });
  };
  for (const char* k : {"core.v1.Pod", "core.v1.Node", "core.v1.Namespace", "scheduling.k8s.io.v1.PriorityClass",
                        "policy.v1.PodDisruptionBudget"}) {
    EXPECT_TRUE(has(std::string(k) + ".yaml")) << k;
    EXPECT_TRUE(has(std::string(k) + ".json")) << k;
  }
  auto at_head = [&](const std::string& file) {
    return std::any_of(all.begin(), all.end(), [&](const fixture& f) { return f.dir == "HEAD" && f.file == file; });
  };
  EXPECT_TRUE(at_head("scheduling.k8s.io.v1beta1.PodGroup.yaml"));
  EXPECT_TRUE(at_head("scheduling.k8s.io.v1beta1.PodGroup.json"));
}

// ---- The kinds the manifest loader reads ----

TEST(StrictFields, SchemaTypeOfEveryLoaderKind) {
  EXPECT_EQ(schema_type("v1", "Pod"), "k8s.io.api.core.v1.Pod");
  EXPECT_EQ(schema_type("v1", "Node"), "k8s.io.api.core.v1.Node");
  EXPECT_EQ(schema_type("v1", "Namespace"), "k8s.io.api.core.v1.Namespace");
  EXPECT_EQ(schema_type("v1", "Service"), "k8s.io.api.core.v1.Service");
  EXPECT_EQ(schema_type("v1", "ReplicationController"), "k8s.io.api.core.v1.ReplicationController");
  EXPECT_EQ(schema_type("scheduling.k8s.io/v1", "PriorityClass"), "k8s.io.api.scheduling.v1.PriorityClass");
  EXPECT_EQ(schema_type("policy/v1", "PodDisruptionBudget"), "k8s.io.api.policy.v1.PodDisruptionBudget");
  EXPECT_EQ(schema_type("scheduling.k8s.io/v1beta1", "PodGroup"), "k8s.io.api.scheduling.v1beta1.PodGroup");
  EXPECT_EQ(schema_type("scheduling.k8s.io/v1beta1", "PodGroupList"), "k8s.io.api.scheduling.v1beta1.PodGroupList");
  // The Coscheduling PodGroup is a CRD, not in the upstream schema: not checked.
  EXPECT_EQ(schema_type("scheduling.x-k8s.io/v1alpha1", "PodGroup"), "");
  // Lists: kubectl's generic List, and the apiserver's typed ones.
  EXPECT_EQ(schema_type("v1", "List"), "k8s.io.api.core.v1.List");
  EXPECT_EQ(schema_type("v1", "PodList"), "k8s.io.api.core.v1.PodList");
  EXPECT_EQ(schema_type("v1", "NodeList"), "k8s.io.api.core.v1.NodeList");
  // apps/v1 is not in k8s-fields.tsv: ReplicaSet and StatefulSet are not checked.
  EXPECT_EQ(schema_type("apps/v1", "ReplicaSet"), "");
  EXPECT_EQ(schema_type("apps/v1", "StatefulSet"), "");
}

TEST(StrictFields, SchemaTypeByApiVersion) {
  EXPECT_EQ(schema_type("scheduling.k8s.io/v1beta1", "PriorityClass"), "k8s.io.api.scheduling.v1beta1.PriorityClass");
  EXPECT_EQ(schema_type("events.k8s.io/v1", "Event"), "k8s.io.api.events.v1.Event");
  EXPECT_EQ(schema_type("v1", "Event"), "k8s.io.api.core.v1.Event");
  EXPECT_EQ(schema_type("v1", "Status"), "k8s.io.apimachinery.pkg.apis.meta.v1.Status");
  EXPECT_EQ(schema_type("v1", "WatchEvent"), "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent");
  // No apiVersion (the loader warns and assumes the default): the kind's v1, core first.
  EXPECT_EQ(schema_type("", "Pod"), "k8s.io.api.core.v1.Pod");
  EXPECT_EQ(schema_type("", "PriorityClass"), "k8s.io.api.scheduling.v1.PriorityClass");
  EXPECT_EQ(schema_type("", "Event"), "k8s.io.api.core.v1.Event");
  EXPECT_EQ(schema_type("", "PodGroup"), "k8s.io.api.scheduling.v1beta1.PodGroup");
  // The wrong group, an unknown version or kind: no schema.
  EXPECT_EQ(schema_type("apps/v1", "Pod"), "");
  EXPECT_EQ(schema_type("v2", "Pod"), "");
  EXPECT_EQ(schema_type("policy/v1beta1", "PodDisruptionBudget"), "");
  EXPECT_EQ(schema_type("v1", "Deployment"), "");
  EXPECT_EQ(schema_type("v1", "ObjectMeta"), "");  // a type, not a kind
}

const char* clean_pod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: frontend}
  annotations: {example.com/anything: "goes"}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: "1", controller: true}
spec:
  schedulerName: default-scheduler
  priorityClassName: high
  nodeSelector: {disktype: ssd, kubernetes.io/os: linux}
  tolerations:
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [z1, z2]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [n9]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions: [{key: disk, operator: Exists}]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: web}}
          namespaceSelector: {}
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchExpressions: [{key: app, operator: In, values: [web]}]
    matchLabelKeys: [pod-template-hash]
  initContainers:
  - name: init
    image: busybox
    command: [sh, -c, "true"]
    resources: {requests: {cpu: 100m}}
  containers:
  - name: app
    image: nginx:1.27
    ports:
    - {name: http, containerPort: 8080, hostPort: 80, protocol: TCP}
    env:
    - {name: MODE, value: prod}
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: creds, key: password, optional: false}}
    - name: LIMIT
      valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
    envFrom:
    - configMapRef: {name: web-config}
      prefix: CFG_
    - secretRef: {name: web-secrets}
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1, hugepages-2Mi: 64Mi}
      limits: {cpu: "2", memory: 2Gi}
    readinessProbe:
      httpGet: {path: /healthz, port: http, scheme: HTTP}
      periodSeconds: 5
    livenessProbe:
      tcpSocket: {port: 8080}
    volumeMounts:
    - {name: config, mountPath: /etc/web, readOnly: true}
    securityContext:
      runAsNonRoot: true
      capabilities: {drop: [ALL]}
  volumes:
  - name: config
    configMap:
      name: web-config
      items: [{key: a, path: a.conf}]
  - name: secret
    secret: {secretName: web-secrets, defaultMode: 0400}
  - name: data
    persistentVolumeClaim: {claimName: web-data}
  - name: scratch
    emptyDir: {sizeLimit: 1Gi}
  - name: projected
    projected:
      sources:
      - configMap: {name: a}
      - secret: {name: b}
      - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  ephemeralContainers:
  - name: debug
    image: busybox
    targetContainerName: app
status:
  phase: Pending
  conditions:
  - {type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: "2024-01-01T00:00:00Z"}
)";

TEST(StrictFields, CleanPodHasNoUnknownField) { EXPECT_EQ(check(clean_pod), paths{}); }

TEST(StrictFields, CleanObjectsOfEveryLoaderKind) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: z1}}
spec:
  unschedulable: false
  podCIDR: 10.0.0.0/24
  taints: [{key: dedicated, value: gpu, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}]
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: 7800m, memory: 30Gi, pods: "110", example.com/widget: "4"}
  conditions: [{type: Ready, status: "True", lastHeartbeatTime: "2024-01-01T00:00:00Z"}]
  images: [{names: [nginx:1.27], sizeBytes: 50000000}]
  nodeInfo: {kubeletVersion: v1.36.0, architecture: amd64, operatingSystem: linux}
  addresses: [{type: InternalIP, address: 10.0.0.1}]
)"), paths{});
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {env: prod}}
spec: {finalizers: [kubernetes]}
status: {phase: Active}
)"), paths{});
  EXPECT_EQ(check(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: false
preemptionPolicy: PreemptLowerPriority
description: for the web tier
)"), paths{});
  EXPECT_EQ(check(R"(
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 50%
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [frontend]}]
  unhealthyPodEvictionPolicy: AlwaysAllow
status: {disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3,
         disruptedPods: {web-0: "2024-01-01T00:00:00Z"}}
)"), paths{});
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  type: ClusterIP
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
)"), paths{});
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 3
  selector: {app: web}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx}]
)"), paths{});
}

// apps/v1 is not in the TSV (its generated.proto was not part of the snapshot): not checked at all.
TEST(StrictFields, AppsKindsAreNotChecked) {
  EXPECT_EQ(check(R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabel: {app: db}}
  template: {spec: {nodeselector: {a: b}}}
)"), paths{});
  EXPECT_EQ(check("{apiVersion: apps/v1, kind: ReplicaSet, spec: {selectr: {}}}"), paths{});
}

TEST(StrictFields, UnknownKindIsNotChecked) {
  EXPECT_EQ(check("{apiVersion: example.com/v1, kind: Widget, spec: {anything: 1}}"), paths{});
  EXPECT_EQ(check("{apiVersion: v1, kind: Pod, spec: {nodeselector: {}}}"), paths{"spec.nodeselector"});
}

// ---- Typos, with the paths the apiserver names ----

TEST(StrictFields, TopLevelSpecField) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeselector: {disktype: ssd}
  containers: [{name: app, image: nginx}]
)"), paths{"spec.nodeselector"});
}

TEST(StrictFields, FieldInsideAListOfObjects) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      request: {cpu: "64"}
)"), paths{"spec.containers[0].resources.request"});
}

TEST(StrictFields, MetadataTypo) {
  EXPECT_EQ(check("{apiVersion: v1, kind: Node, metadata: {name: n1, lables: {zone: z1}}}"), paths{"metadata.lables"});
}

TEST(StrictFields, SecondItemOfAList) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  tolerations:
  - {key: a, operator: Exists, effect: NoSchedule}
  - {key: b, operator: Exists, efect: NoSchedule}
)"), paths{"spec.tolerations[1].efect"});
}

TEST(StrictFields, InsideNodeSelectorTerms) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operater: In, values: [z1]}
        - matchExpression:
          - {key: zone, operator: In, values: [z2]}
)"), (paths{
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operater",
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpression",
  }));
}

TEST(StrictFields, AllTyposInDocumentOrder) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metdata: {name: web}
spec:
  containers:
  - name: a
    imagePullPolicy: Always
    resource: {}
  - name: b
    ports: [{containerport: 80}]
  schedulername: x
stauts: {}
)"), (paths{"metdata", "spec.containers[0].resource", "spec.containers[1].ports[0].containerport",
             "spec.schedulername", "stauts"}));
}

TEST(StrictFields, UnknownKeyWithANullOrScalarValueIsStillUnknown) {
  EXPECT_EQ(check("{apiVersion: v1, kind: Pod, spec: {nodeselector: null, prority: 5, containers: []}}"),
            (paths{"spec.nodeselector", "spec.prority"}));
}

TEST(StrictFields, MapKeysAreFreeForm) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {request: x, nodeselector: y, "a.b/c": d}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
spec:
  nodeSelector: {requests: "1", spec: x}
  overhead: {cpu: 10m}
  containers:
  - name: app
    resources:
      requests: {request: "1", cpu: "1", example.com/foo: "2"}
      limits: {anything: "3"}
)"), paths{});
}

// ManagedFieldsEntry is named like a proto map entry but is a message (the TSV has maps only as
// map<K,V>): its fields are checked, while its fieldsV1 (FieldsV1, free-form) is not.
TEST(StrictFields, EntryMessagesAreCheckedButFieldsV1IsFreeForm) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  managedFields:
  - manager: kubectl
    operation: Apply
    apiVersion: v1
    time: "2024-01-01T00:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {f:app: {}}}
      f:spec:
        f:containers:
          k:{"name":"app"}:
            .: {}
            f:image: {}
  - manager: kube-scheduler
    mananger: typo
)"), paths{"metadata.managedFields[1].mananger"});
}

// Scalars in JSON although messages in proto: a Quantity, IntOrString or Time value is not an object
// to look into, whatever it is.
TEST(StrictFields, JsonScalarTypesAreNotObjects) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web, creationTimestamp: "2024-01-01T00:00:00Z", deletionTimestamp: null}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: {string: "1"}}}
    readinessProbe: {httpGet: {port: {intVal: 8080}}}
  volumes: [{name: s, emptyDir: {sizeLimit: {string: 1Gi}}}]
)"), paths{});
}

// Go `json:",inline"` structs: their members are keys of the enclosing object; their own name is not.
TEST(StrictFields, InlineStructs) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    env:
    - {name: A, valueFrom: {configMapKeyRef: {name: cm, key: a}}}
    - {name: B, valueFrom: {secretKeyRef: {name: s, key: b, nmae: typo}}}
    envFrom: [{configMapRef: {name: cm, localObjectReference: {name: cm}}}]
  volumes:
  - name: v
    hostPath: {path: /data}
  - name: w
    volumeSource: {emptyDir: {}}
  ephemeralContainers:
  - {name: debug, image: busybox, targetContainerName: app, ephemeralContainerCommon: {}}
)"), (paths{"spec.containers[0].env[1].valueFrom.secretKeyRef.nmae",
             "spec.containers[0].envFrom[0].configMapRef.localObjectReference", "spec.volumes[1].volumeSource",
             "spec.ephemeralContainers[0].ephemeralContainerCommon"}));
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data, typo: 1}
  nfs: {server: s, path: /x}
)"), paths{"spec.hostPath.typo"});
}

TEST(StrictFields, ApiVersionAndKindOnlyWhereTypeMetaIs) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: {name: web, kind: x}
spec:
  kind: Pod
  containers: [{name: app, apiVersion: v1}]
)"), (paths{"metadata.kind", "spec.kind", "spec.containers[0].apiVersion"}));
  // A pod template has metadata but no TypeMeta.
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  template: {kind: PodTemplateSpec, metadata: {labels: {a: b}}, spec: {containers: []}}
)"), paths{"spec.template.kind"});
}

// kubectl's `kind: List`: each item by its own apiVersion and kind.
TEST(StrictFields, ListItemsByTheirOwnKind) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: List
metadata: {resourceVersion: "", selfLnk: x}
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "1"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1}
  spec: {nodeselector: {a: b}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
  spec: {anything: 1}
- kind: PriorityClass
  metadata: {name: pc}
  vaule: 10
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: pdb}
  spec: {minAvailable: 1, selector: {matchLabels: {a: b}, matchLabel: {}}}
- just a string
)"), (paths{"metadata.selfLnk", "items[1].spec.nodeselector", "items[3].vaule",
             "items[4].spec.selector.matchLabel"}));
}

// The apiserver's typed lists: the items' type comes from the list; they may carry apiVersion/kind.
TEST(StrictFields, TypedListItems) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: NodeList
metadata: {resourceVersion: "100"}
items:
- metadata: {name: t1}
  status: {allocatable: {cpu: "2"}}
- apiVersion: v1
  kind: Node
  metadata: {nmae: t2}
)"), paths{"items[1].metadata.nmae"});
  EXPECT_EQ(check("{apiVersion: v1, kind: PodList, items: [{spec: {containers: [{nam: a}]}}]}"),
            paths{"items[0].spec.containers[0].nam"});
}

// JSON reaches the check as the loader parses it: with yaml-cpp, JSON being YAML's flow subset.
TEST(StrictFields, JsonInput) {
  EXPECT_EQ(check(R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "web", "lables": {"app": "web"}},
  "spec": {
    "nodeselector": {"disktype": "ssd"},
    "containers": [{"name": "app", "image": "nginx", "resources": {"request": {"cpu": "64"}}}]
  }
})"), (paths{"metadata.lables", "spec.nodeselector", "spec.containers[0].resources.request"}));
}

TEST(StrictFields, NoApiVersionUsesTheKindsV1) {
  YAML::Node n = YAML::Load("{kind: Pod, spec: {nodeselector: {}}}");
  auto r = unknown_fields(n, "", "Pod");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, paths{"spec.nodeselector"});
}

// Shapes the decoder rejects are its to report: nothing to look into, and no crash.
TEST(StrictFields, WrongShapesAreLeftToTheDecoder) {
  EXPECT_EQ(check(R"(
apiVersion: v1
kind: Pod
metadata: [a, b]
spec:
  containers: {name: app}
  tolerations: [1, [2], null, {key: a, bogus: 1}]
  affinity: 7
  ? [complex, key]
  : value
)"), paths{"spec.tolerations[3].bogus"});
  EXPECT_EQ(check("[1, 2]"), paths{});
  EXPECT_EQ(check("just a scalar"), paths{});
  auto r = unknown_fields(YAML::Node(), "v1", "Pod");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, paths{});
}

// ---- Limits ----

// 100 aliases of a pod with 100 aliases of a container with 100 aliases of an env var: 30 lines,
// three million nodes to visit.
std::string alias_bomb() {
  std::string s = "apiVersion: v1\nkind: List\nitems:\n- &p\n  apiVersion: v1\n  kind: Pod\n  spec:\n"
                  "    containers:\n    - &c\n      name: a\n      env:\n"
                  "      - &e {name: x, valueFrom: {fieldRef: {fieldPath: a}}}\n";
  for (int i = 0; i < 99; ++i) s += "      - *e\n";
  for (int i = 0; i < 99; ++i) s += "    - *c\n";
  for (int i = 0; i < 99; ++i) s += "- *p\n";
  return s;
}

TEST(StrictFields, AliasExpansionIsBounded) {
  YAML::Node n = YAML::Load(alias_bomb());
  auto r = unknown_fields(n, "v1", "List");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("more than 1000000 nodes to visit"), std::string::npos) << r.err().message;
  EXPECT_NE(r.err().message.find("at items["), std::string::npos) << r.err().message;
  // The budget counts what is visited: the clean pod is well under the default and over 50.
  YAML::Node pod = YAML::Load(clean_pod);
  EXPECT_TRUE(unknown_fields(pod, "v1", "Pod").ok());
  strict_limits small;
  small.max_nodes = 50;
  r = unknown_fields(pod, "v1", "Pod", small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("more than 50 nodes to visit"), std::string::npos) << r.err().message;
}

TEST(StrictFields, DepthIsBounded) {
  YAML::Node n = YAML::Load(clean_pod);
  strict_limits shallow;
  shallow.max_depth = 4;
  auto r = unknown_fields(n, "v1", "Pod", shallow);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("nested deeper than 4 levels"), std::string::npos) << r.err().message;
  EXPECT_EQ(r.err().message.rfind("strict field check: spec.", 0), 0u) << r.err().message;
  EXPECT_TRUE(unknown_fields(n, "v1", "Pod").ok());
}

// scheduling/v1beta1's CompositePodGroupTemplate holds compositePodGroupTemplates of itself: the
// schema alone does not bound the depth.
TEST(StrictFields, RecursiveTypeDepthIsBounded) {
  std::string text = "{apiVersion: scheduling.k8s.io/v1beta1, kind: Workload, spec: {compositePodGroupTemplates: ";
  const int levels = 60;  // two YAML levels each: a list and its item
  for (int i = 0; i < levels; ++i) text += "[{name: c, compositePodGroupTemplates: ";
  text += "[]";
  for (int i = 0; i < levels; ++i) text += "}]";
  text += "}}";
  YAML::Node n = YAML::Load(text);
  auto r = unknown_fields(n, "scheduling.k8s.io/v1beta1", "Workload");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("nested deeper than 100 levels"), std::string::npos) << r.err().message;
  YAML::Node shallow = YAML::Load(
      "{apiVersion: scheduling.k8s.io/v1beta1, kind: Workload, spec: {compositePodGroupTemplates: "
      "[{name: a, compositePodGroupTemplates: [{name: b, nmae: c}]}]}}");
  r = unknown_fields(shallow, "scheduling.k8s.io/v1beta1", "Workload");
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_EQ(*r, paths{"spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].nmae"});
}

// ---- The repository's own example clusters and manifests are clean ----

void check_documents(const fs::path& file) {
  SCOPED_TRACE(file.string());
  std::vector<YAML::Node> docs = YAML::LoadAll(slurp(file));
  int checked = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const YAML::Node& d = docs[i];
    if (!d.IsMap()) continue;
    std::string api_version = scalar(d, "apiVersion"), kind = scalar(d, "kind");
    if (schema_type(api_version, kind).empty()) continue;
    auto r = unknown_fields(d, api_version, kind);
    ASSERT_TRUE(r.ok()) << r.err().message;
    EXPECT_EQ(*r, paths{}) << "document " << i + 1 << " (" << kind << ")";
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(StrictFields, BenchExamplesAreClean) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(KAS_REPO_ROOT) / "bench" / "examples")) {
    std::string ext = e.path().extension().string();
    if (ext != ".yaml" && ext != ".json") continue;
    check_documents(e.path());
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(StrictFields, ValidTestManifestsAreClean) {
  for (const char* f : {"objects.yaml", "typed-lists.yaml", "list.yaml", "multi-doc.yaml", "cluster.json", "node-n1.yaml"})
    check_documents(fs::path(KAS_REPO_ROOT) / "tests" / "fixtures" / "manifests" / f);
}

}  // namespace
