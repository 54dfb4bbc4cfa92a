#include "config/workload.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "config/cluster_manifests.hpp"
#include "config/manifest_objects.hpp"
#include "config/yaml_guard.hpp"
#include "messages/codec.hpp"
#include "messages/field_path.hpp"
#include "messages/name_validation.hpp"
#include "messages/quantity.hpp"

namespace kas {

namespace {

error fail(const std::string& where, const std::string& what) { return error{where + ": " + what}; }

const char* type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "null";
  }
}

status_or_error only_keys(const YAML::Node& m, const std::string& where, const std::set<std::string>& allowed) {
  for (auto it = m.begin(); it != m.end(); ++it) {
    std::string k = it->first.as<std::string>();
    if (!allowed.count(k)) return fail(field_path(where, k), "unknown field");
  }
  return ok_t{};
}

result<std::string> get_string(const YAML::Node& m, const char* key, const std::string& where, bool required) {
  YAML::Node v = m[key];
  if (!v || v.IsNull()) {
    if (required) return fail(field_path(where, key), "required field is missing");
    return std::string{};
  }
  if (!v.IsScalar()) return fail(field_path(where, key), std::string("expected a string, got ") + type_name(v));
  return v.as<std::string>();
}

result<int64_t> get_int(const YAML::Node& m, const char* key, const std::string& where, int64_t dflt, int64_t min,
                        int64_t max) {
  YAML::Node v = m[key];
  if (!v || v.IsNull()) return dflt;
  int64_t x = 0;
  if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, x))
    return fail(field_path(where, key), "expected an integer, got " + (v.IsScalar() ? "\"" + v.Scalar() + "\"" : type_name(v)));
  if (x < min || x > max)
    return fail(field_path(where, key), "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                                     ", got " + std::to_string(x));
  return x;
}

result<bool> get_bool(const YAML::Node& m, const char* key, const std::string& where) {
  YAML::Node v = m[key];
  if (!v || v.IsNull()) return false;
  bool b = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b))
    return fail(field_path(where, key), "expected true or false, got " + (v.IsScalar() ? "\"" + v.Scalar() + "\"" : type_name(v)));
  return b;
}

std::string prefix_of(const k8s::meta::ObjectMeta& m, const char* fallback) {
  if (!m.generate_name().empty()) return m.generate_name();
  if (!m.name().empty()) return m.name() + "-";
  return fallback;
}

// scheduler_perf's templates name their objects by metadata.generateName alone; the manifest loader
// (built for `simulate`, where every object is real) requires metadata.name. Such a template is
// loaded from a temporary copy that names each object "<generateName>template"; errors and origins
// still name the original file.
result<cluster_manifests> load_template_file(const std::string& file) {
  auto read = read_manifest_documents(file);
  if (!read) return read.err();
  std::vector<YAML::Node> docs;
  for (auto& d : *read) docs.push_back(d.root);
  bool named = false;
  for (auto& d : docs) {
    if (!d.IsMap()) continue;
    // scheduler_perf's volume and claim templates have no metadata at all: createPods names them.
    bool volume_kind = d["kind"] && d["kind"].IsScalar() &&
                       (d["kind"].Scalar() == "PersistentVolume" || d["kind"].Scalar() == "PersistentVolumeClaim");
    if (!d["metadata"] && volume_kind) d["metadata"] = YAML::Node(YAML::NodeType::Map);
    if (!d["metadata"] || !d["metadata"].IsMap()) continue;
    YAML::Node meta = d["metadata"];
    if (meta["name"] && !meta["name"].IsNull()) continue;
    if (meta["generateName"] && meta["generateName"].IsScalar()) {
      meta["name"] = meta["generateName"].as<std::string>() + "template";
      named = true;
    } else if (volume_kind) {
      meta["name"] = "template";
      named = true;
    }
  }
  if (!named) return load_manifests({file});
  static std::atomic<uint64_t> seq{0};
  auto copy = std::filesystem::temp_directory_path() /
              ("kas_template_" + std::to_string(::getpid()) + "_" + std::to_string(seq++) + "_" +
               std::filesystem::path(file).filename().string());
  {
    std::ofstream out(copy, std::ios::binary);
    for (auto& d : docs) out << "---\n" << YAML::Dump(d) << "\n";
    if (!out) return error{file + ": cannot write a named copy to " + copy.string()};
  }
  auto m = load_manifests({copy.string()});
  std::error_code ec;
  std::filesystem::remove(copy, ec);
  auto name_original = [&](std::string msg) {
    for (size_t at; (at = msg.find(copy.string())) != std::string::npos;) msg.replace(at, copy.string().size(), file);
    return msg;
  };
  if (!m) return error{name_original(m.err().message)};
  for (auto& w : m->warnings) w = name_original(std::move(w));
  auto restore = [&](auto& objects) {
    for (auto& o : objects) o.second.file = file;
  };
  restore(m->nodes);
  restore(m->pods);
  restore(m->priority_classes);
  restore(m->pdbs);
  restore(m->namespaces);
  restore(m->workloads);
  restore(m->pvs);
  restore(m->pvcs);
  restore(m->storage_classes);
  restore(m->csi_nodes);
  restore(m->csi_drivers);
  restore(m->csi_storage_capacities);
  return m;
}

class workload_loader {
public:
  explicit workload_loader(std::string path) : path_(std::move(path)) {
    dir_ = std::filesystem::path(path_).parent_path();
  }

  result<workload> load() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return error{path_ + ": cannot read the file"};
    yaml_limits limits;  // a workload is one object: 3 MiB, as the apiserver would take it
    std::string text;
    if (auto s = read_bounded(in, path_, limits.max_file_bytes, text); !s) return s.err();
    auto docs = load_yaml(path_, text, yaml_input::single, limits);
    if (!docs) return docs.err();
    // The workload is the file's first document, as it always was; an empty file is a null one.
    YAML::Node root = docs->empty() ? YAML::Node() : docs->front().root;
    try {
      return parse(root);
    } catch (const YAML::Exception& e) {
      return error{path_ + ": " + e.what()};
    }
  }

private:
  result<workload> parse(const YAML::Node& root) {
    if (!root.IsMap()) return fail(path_, std::string("expected a workload (a mapping), got ") + type_name(root));
    const std::string top = path_ + ":";
    if (root["kind"] && root["apiVersion"] && !root["ops"])
      return fail(path_, "this is a Kubernetes manifest (apiVersion, kind), not a bench workload file: load it "
                         "with `simulate --cluster`");
    if (auto s = only_keys(root, top, {"name", "description", "threshold", "ops"}); !s) return s.err();
    workload w;
    w.file = path_;
    auto name = get_string(root, "name", top, true);
    if (!name) return name.err();
    w.name = *name;
    auto desc = get_string(root, "description", top, false);
    if (!desc) return desc.err();
    w.description = *desc;
    if (YAML::Node t = root["threshold"]; t && !t.IsNull()) {
      if (!t.IsScalar() || !YAML::convert<double>::decode(t, w.threshold) || w.threshold < 0)
        return error{path_ + ": threshold: expected a non-negative number"};
    }
    YAML::Node ops = root["ops"];
    if (!ops || !ops.IsSequence() || ops.size() == 0)
      return error{path_ + ": ops: expected a non-empty list of ops"};
    for (size_t i = 0; i < ops.size(); ++i) {
      auto op = parse_op(ops[i], i);
      if (!op) return op.err();
      if (auto s = competing(w, *op); !s) return s.err();
      w.ops.push_back(std::move(*op));
    }
    for (auto& set : w.competing_sets) {
      if (set.group_keys.size() < 2)
        return error{set.where + ": competing set \"" + set.name + "\" has one gang; it needs at least two to compete"};
      if (open_sets_.count(set.name))
        return error{set.where + ": no barrier after competing set \"" + set.name +
                     "\": add a barrier op after its last op (its gangs are awaited together there)"};
    }
    if (w.measured_pod_count() == 0) return error{path_ + ": ops: no createPods op has collectMetrics: true"};
    w.warnings = std::move(warnings_);
    return w;
  }

  // podGroup.competingSet: adds the op's gangs to their set; a barrier ends the sets open before it.
  status_or_error competing(workload& w, workload_op& op) {
    if (op.opcode == workload_opcode::barrier) {
      for (auto& name : open_sets_) {
        auto it = std::find_if(w.competing_sets.begin(), w.competing_sets.end(),
                               [&](const competing_set& c) { return c.name == name; });
        op.barrier_may_stay_pending += it->pods - it->smallest_min_count;
        ended_sets_[name] = op.where;
      }
      open_sets_.clear();
      return ok_t{};
    }
    if (op.opcode != workload_opcode::create_pods || !op.gang || op.gang->competing_set.empty()) return ok_t{};
    const gang_spec& g = *op.gang;
    std::string where = op.where + ".podGroup.competingSet";
    if (auto e = ended_sets_.find(g.competing_set); e != ended_sets_.end())
      return error{where + ": competing set \"" + g.competing_set + "\" already ended at the barrier " +
                   e->second.substr(e->second.rfind("ops[")) + ": all its gangs must come before one barrier"};
    if (!op.skip_wait)
      return error{where + ": needs skipWaitToCompletion: true (a competing set's gangs are awaited together at the "
                           "next barrier, where its losers may stay pending)"};
    auto it = std::find_if(w.competing_sets.begin(), w.competing_sets.end(),
                           [&](const competing_set& c) { return c.name == g.competing_set; });
    if (it == w.competing_sets.end()) {
      w.competing_sets.push_back({g.competing_set, where, {}, 0, static_cast<size_t>(g.min_count)});
      it = std::prev(w.competing_sets.end());
    }
    for (size_t k = 0; k < op.count / g.size; ++k) it->group_keys.push_back(pod_group_key(g.api, g.ns, g.group_name(k)));
    it->pods += op.count;
    it->smallest_min_count = std::min(it->smallest_min_count, static_cast<size_t>(g.min_count));
    open_sets_.insert(g.competing_set);
    return ok_t{};
  }

  std::string resolve(const std::string& rel) const {
    std::filesystem::path p(rel);
    return p.is_absolute() ? rel : (dir_ / p).string();
  }

  result<cluster_manifests> load_template(const std::string& rel, const std::string& where) {
    auto m = load_template_file(resolve(rel));
    if (!m) return fail(where, m.err().message);
    for (auto& w : m->warnings) warnings_.push_back(where + ": " + w);
    return std::move(*m);
  }

  result<std::shared_ptr<const node_template>> node_tmpl(const std::string& rel, const std::string& where,
                                                         std::vector<node_label_strategy> labels,
                                                         bool hostname_label,
                                                         std::shared_ptr<const node_allocatable_strategy> allocatable = nullptr) {
    auto m = load_template(rel, where);
    if (!m) return m.err();
    if (m->nodes.size() != 1 || !m->pods.empty())
      return fail(where, resolve(rel) + ": a node template must hold exactly one Node");
    auto t = std::make_shared<node_template>();
    t->proto = m->nodes.front().first;
    const auto& meta = t->proto->metadata();
    if (meta.generate_name().empty() && !meta.name().empty()) t->fixed_name = meta.name();
    t->name_prefix = meta.generate_name().empty() ? "node-" : meta.generate_name();
    t->hostname_label = hostname_label;
    t->labels = std::move(labels);
    t->allocatable = std::move(allocatable);
    if (auto n = make_node(*t, 0); !n) return fail(where, resolve(rel) + ": " + n.err().message);
    return std::shared_ptr<const node_template>(t);
  }

  // `claim_volume`: the pod's volumes become the one claim volume of createPods with volume
  // templates (make_pod_with_volumes names its claim per pod).
  result<std::shared_ptr<const pod_template>> pod_tmpl(const std::string& rel, const std::string& where,
                                                       const std::string& ns, bool claim_volume = false) {
    auto m = load_template(rel, where);
    if (!m) return m.err();
    if (m->pods.size() != 1 || !m->nodes.empty())
      return fail(where, resolve(rel) + ": a pod template must hold exactly one Pod");
    auto pod = std::make_shared<k8s::core::Pod>(*m->pods.front().first);
    if (!pod->spec().node_name().empty())
      return fail(where, resolve(rel) + ": spec.nodeName: a pod template must not be bound to a node");
    if (claim_volume) {
      pod->mutable_spec()->clear_volumes();
      auto* v = pod->mutable_spec()->add_volumes();
      v->set_name("vol");
      v->mutable_volume_source()->mutable_persistent_volume_claim()->set_claim_name("pvc-template");
    }
    auto* meta = pod->mutable_metadata();
    std::string prefix = prefix_of(*meta, "pod-");
    meta->set_namespace_(ns);
    if (meta->name().empty()) meta->set_name(prefix + "template");
    // Compile together with every PriorityClass created so far, so priority admission applies.
    cluster_manifests one = created_;
    one.pods.clear();
    one.nodes.clear();
    manifest_origin o = m->pods.front().second;
    o.ns = ns;
    one.pods.emplace_back(pod, o);
    auto in = compile_cluster(one);
    if (!in) return fail(where, in.err().message);
    if (in->pending_pods.size() != 1) return fail(where, resolve(rel) + ": the pod template is terminal");
    auto t = std::make_shared<pod_template>();
    t->compiled = in->pending_pods.front();
    t->name_prefix = prefix;
    return std::shared_ptr<const pod_template>(t);
  }

  result<std::vector<node_label_strategy>> label_strategies(const YAML::Node& op, const std::string& where) {
    std::vector<node_label_strategy> out;
    if (YAML::Node s = op["labelNodePrepareStrategy"]; s && !s.IsNull()) {
      std::string w = where + ".labelNodePrepareStrategy";
      if (!s.IsMap()) return fail(w, std::string("expected a mapping, got ") + type_name(s));
      if (auto k = only_keys(s, w, {"labelKey", "labelValues"}); !k) return k.err();
      node_label_strategy st;
      auto key = get_string(s, "labelKey", w, true);
      if (!key) return key.err();
      st.key = *key;
      YAML::Node vals = s["labelValues"];
      if (!vals || !vals.IsSequence() || vals.size() == 0)
        return fail(w + ".labelValues", "expected a non-empty list of strings");
      for (auto v : vals) st.values.push_back(v.as<std::string>());
      out.push_back(std::move(st));
    }
    if (YAML::Node s = op["uniqueNodeLabelStrategy"]; s && !s.IsNull()) {
      std::string w = where + ".uniqueNodeLabelStrategy";
      if (!s.IsMap()) return fail(w, std::string("expected a mapping, got ") + type_name(s));
      if (auto k = only_keys(s, w, {"labelKey"}); !k) return k.err();
      node_label_strategy st;
      auto key = get_string(s, "labelKey", w, true);
      if (!key) return key.err();
      st.key = *key;
      st.unique = true;
      out.push_back(std::move(st));
    }
    return out;
  }

  // createNodes' nodeAllocatableStrategy; null when the op has none.
  result<std::shared_ptr<const node_allocatable_strategy>> allocatable_strategy(const YAML::Node& op,
                                                                               const std::string& where) {
    YAML::Node s = op["nodeAllocatableStrategy"];
    if (!s || s.IsNull()) return std::shared_ptr<const node_allocatable_strategy>();
    std::string w = where + ".nodeAllocatableStrategy";
    if (!s.IsMap()) return fail(w, std::string("expected a mapping, got ") + type_name(s));
    if (auto k = only_keys(s, w, {"nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"}); !k) return k.err();
    auto out = std::make_shared<node_allocatable_strategy>();
    if (YAML::Node na = s["nodeAllocatable"]; na && !na.IsNull()) {
      if (!na.IsMap()) return fail(w + ".nodeAllocatable", std::string("expected a mapping, got ") + type_name(na));
      for (auto it = na.begin(); it != na.end(); ++it) {
        std::string name = it->first.as<std::string>(), at = w + ".nodeAllocatable." + name;
        if (!it->second.IsScalar()) return fail(at, std::string("expected a quantity, got ") + type_name(it->second));
        auto q = parse_quantity(it->second.Scalar());
        if (!q) return fail(at, q.err().message);
        if (q->negative()) return fail(at, "must be greater than or equal to 0");
        out->node_allocatable.emplace_back(name, it->second.Scalar());
      }
    }
    if (YAML::Node cna = s["csiNodeAllocatable"]; cna && !cna.IsNull()) {
      if (!cna.IsMap()) return fail(w + ".csiNodeAllocatable", std::string("expected a mapping, got ") + type_name(cna));
      for (auto it = cna.begin(); it != cna.end(); ++it) {
        node_allocatable_strategy::csi_driver d;
        d.name = it->first.as<std::string>();
        std::string at = w + ".csiNodeAllocatable." + d.name;
        if (d.name.empty()) return fail(w + ".csiNodeAllocatable", "a driver name must not be empty");
        if (YAML::Node r = it->second; r && !r.IsNull()) {
          if (!r.IsMap()) return fail(at, std::string("expected a mapping ({count: N}), got ") + type_name(r));
          if (auto k = only_keys(r, at, {"count"}); !k) return k.err();
          auto c = get_int(r, "count", at, -1, 0, INT32_MAX);
          if (!c) return c.err();
          if (*c >= 0) d.count = static_cast<int32_t>(*c);
        }
        out->csi_drivers.push_back(std::move(d));
      }
      std::sort(out->csi_drivers.begin(), out->csi_drivers.end(),
                [](const auto& a, const auto& b) { return a.name < b.name; });
    }
    if (YAML::Node mp = s["migratedPlugins"]; mp && !mp.IsNull()) {
      if (!mp.IsSequence()) return fail(w + ".migratedPlugins", std::string("expected a list of strings, got ") + type_name(mp));
      for (size_t k = 0; k < mp.size(); ++k) {
        if (!mp[k].IsScalar() || mp[k].Scalar().empty())
          return fail(w + ".migratedPlugins[" + std::to_string(k) + "]", "expected a plugin name");
        out->migrated_plugins.push_back(mp[k].Scalar());
      }
    }
    return std::shared_ptr<const node_allocatable_strategy>(std::move(out));
  }

  // createPods' persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath (both or
  // neither); null when the op has neither.
  result<std::shared_ptr<const pod_volume_templates>> volume_templates(const YAML::Node& op, const std::string& where,
                                                                       const std::string& ns) {
    auto pv_path = get_string(op, "persistentVolumeTemplatePath", where, false);
    if (!pv_path) return pv_path.err();
    auto pvc_path = get_string(op, "persistentVolumeClaimTemplatePath", where, false);
    if (!pvc_path) return pvc_path.err();
    if (pv_path->empty() && pvc_path->empty()) return std::shared_ptr<const pod_volume_templates>();
    if (pv_path->empty() || pvc_path->empty())
      return fail(where + (pv_path->empty() ? ".persistentVolumeTemplatePath" : ".persistentVolumeClaimTemplatePath"),
                  "required field is missing: persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath "
                  "go together");
    auto t = std::make_shared<pod_volume_templates>();
    t->ns = ns;
    std::string wpv = where + ".persistentVolumeTemplatePath", wpvc = where + ".persistentVolumeClaimTemplatePath";
    auto pv = load_template(*pv_path, wpv);
    if (!pv) return pv.err();
    if (pv->pvs.size() != 1 || !pv->pvcs.empty() || !pv->pods.empty() || !pv->nodes.empty())
      return fail(wpv, resolve(*pv_path) + ": a volume template must hold exactly one PersistentVolume");
    t->pv = pv->pvs.front().first;
    auto pvc = load_template(*pvc_path, wpvc);
    if (!pvc) return pvc.err();
    if (pvc->pvcs.size() != 1 || !pvc->pvs.empty() || !pvc->pods.empty() || !pvc->nodes.empty())
      return fail(wpvc, resolve(*pvc_path) + ": a claim template must hold exactly one PersistentVolumeClaim");
    auto claim = std::make_shared<k8s::core::PersistentVolumeClaim>(*pvc->pvcs.front().first);
    claim->mutable_metadata()->set_namespace_(ns);
    t->pvc = std::move(claim);
    return std::shared_ptr<const pod_volume_templates>(std::move(t));
  }

  // createPods' podGroup; null when the op has none. `count`: the op's pod count.
  result<std::shared_ptr<const gang_spec>> gang_of(const YAML::Node& op, const std::string& where, size_t i,
                                                    const std::string& ns, size_t count) {
    YAML::Node s = op["podGroup"];
    if (!s || s.IsNull()) return std::shared_ptr<const gang_spec>();
    std::string w = where + ".podGroup";
    if (!s.IsMap()) return fail(w, std::string("expected a mapping, got ") + type_name(s));
    if (auto k = only_keys(s, w, {"size", "minCount", "topologyKey", "api", "competingSet"}); !k) return k.err();
    auto g = std::make_shared<gang_spec>();
    g->ns = ns;
    g->name_prefix = "gang-" + std::to_string(i) + "-";
    auto size = get_int(s, "size", w, -1, 1, 100000);
    if (!size) return size.err();
    if (*size < 0) return fail(w + ".size", "required field is missing");
    g->size = static_cast<size_t>(*size);
    if (count % g->size != 0)
      return fail(w + ".size", "must divide the op's count (" + std::to_string(count) + ") into whole gangs, got " +
                                 std::to_string(g->size));
    auto min = get_int(s, "minCount", w, *size, 1, *size);
    if (!min) return min.err();
    g->min_count = static_cast<int32_t>(*min);
    auto api = get_string(s, "api", w, false);
    if (!api) return api.err();
    if (api->empty() || *api == "workload") g->api = pod_group_api::workload;
    else if (*api == "coscheduling") g->api = pod_group_api::coscheduling;
    else return fail(w + ".api", "must be workload or coscheduling, got \"" + *api + "\"");
    auto key = get_string(s, "topologyKey", w, false);
    if (!key) return key.err();
    if (!key->empty()) {
      if (g->api == pod_group_api::coscheduling)
        return fail(w + ".topologyKey", "api: coscheduling has no topology constraint (scheduling.x-k8s.io/v1alpha1 "
                                        "PodGroups have none); use api: workload");
      if (auto problem = qualified_name_problem(*key); !problem.empty())
        return fail(w + ".topologyKey", "invalid label key \"" + *key + "\": " + problem);
      g->topology_key = *key;
    }
    auto set = get_string(s, "competingSet", w, false);
    if (!set) return set.err();
    if (s["competingSet"] && set->empty()) return fail(w + ".competingSet", "must name a set, got \"\"");
    g->competing_set = *set;
    return std::shared_ptr<const gang_spec>(std::move(g));
  }

  // The op's PodGroups, added to the cluster's objects so far; op.objects becomes the result.
  status_or_error add_pod_groups(workload_op& op, const std::string& where) {
    const gang_spec& g = *op.gang;
    size_t gangs = op.count / g.size;
    for (size_t k = 0; k < gangs; ++k) {
      manifest_origin o;
      o.file = path_;
      o.kind = "PodGroup";
      o.ns = g.ns;
      o.name = g.group_name(k);
      if (g.api == pod_group_api::coscheduling) {
        auto pg = std::make_shared<k8s::coscheduling::PodGroup>();
        pg->mutable_metadata()->set_name(o.name);
        pg->mutable_metadata()->set_namespace_(g.ns);
        pg->mutable_metadata()->set_uid(g.ns + "/" + o.name);
        pg->mutable_spec()->set_min_member(g.min_count);
        created_.coscheduling_pod_groups.emplace_back(std::move(pg), std::move(o));
      } else {
        auto pg = std::make_shared<k8s::scheduling::PodGroup>();
        pg->mutable_metadata()->set_name(o.name);
        pg->mutable_metadata()->set_namespace_(g.ns);
        pg->mutable_metadata()->set_uid(g.ns + "/" + o.name);
        pg->mutable_spec()->mutable_scheduling_policy()->mutable_gang()->set_min_count(g.min_count);
        if (!g.topology_key.empty())
          pg->mutable_spec()->mutable_scheduling_constraints()->add_topology()->set_key(g.topology_key);
        created_.pod_groups.emplace_back(std::move(pg), std::move(o));
      }
    }
    auto in = compile_cluster(created_);
    if (!in) return fail(where + ".podGroup", in.err().message);
    op.objects = in->objects;
    return ok_t{};
  }

  result<workload_op> parse_op(const YAML::Node& n, size_t i) {
    std::string where = path_ + ": ops[" + std::to_string(i) + "]";
    if (!n.IsMap()) return fail(where, std::string("expected an op (a mapping), got ") + type_name(n));
    workload_op op;
    op.where = where;
    auto code = get_string(n, "opcode", where, true);
    if (!code) return code.err();
    if (*code == "createNodes") {
      if (auto s = only_keys(n, where, {"opcode", "count", "nodeTemplatePath", "labelNodePrepareStrategy",
                                        "uniqueNodeLabelStrategy", "nodeAllocatableStrategy"});
          !s)
        return s.err();
      op.opcode = workload_opcode::create_nodes;
      auto count = get_int(n, "count", where, -1, 1, 1000000);
      if (!count) return count.err();
      if (*count < 0) return fail(where + ".count", "required field is missing");
      op.count = static_cast<size_t>(*count);
      auto tp = get_string(n, "nodeTemplatePath", where, true);
      if (!tp) return tp.err();
      auto labels = label_strategies(n, where);
      if (!labels) return labels.err();
      auto alloc = allocatable_strategy(n, where);
      if (!alloc) return alloc.err();
      auto t = node_tmpl(*tp, where + ".nodeTemplatePath", std::move(*labels), true, *alloc);
      if (!t) return t.err();
      if (*alloc) {
        if (auto c = make_csi_node(**t, "template"); !c) return fail(where + ".nodeAllocatableStrategy", c.err().message);
        storage_created_ = where;
      }
      if (!(*t)->fixed_name.empty() && op.count != 1)
        return fail(where + ".count", "must be 1: " + resolve(*tp) + " names its node (metadata.name: " +
                                        (*t)->fixed_name + ", no generateName), got " + std::to_string(op.count));
      op.nodes = *t;
    } else if (*code == "createPods") {
      if (auto s = only_keys(n, where, {"opcode", "count", "podTemplatePath", "namespace", "collectMetrics",
                                        "skipWaitToCompletion", "persistentVolumeTemplatePath",
                                        "persistentVolumeClaimTemplatePath", "podGroup"});
          !s)
        return s.err();
      op.opcode = workload_opcode::create_pods;
      auto count = get_int(n, "count", where, -1, 1, 10000000);
      if (!count) return count.err();
      if (*count < 0) return fail(where + ".count", "required field is missing");
      op.count = static_cast<size_t>(*count);
      auto ns = get_string(n, "namespace", where, false);
      if (!ns) return ns.err();
      std::string nsv = ns->empty() ? "namespace-" + std::to_string(i) : *ns;
      auto tp = get_string(n, "podTemplatePath", where, true);
      if (!tp) return tp.err();
      auto vols = volume_templates(n, where, nsv);
      if (!vols) return vols.err();
      auto t = pod_tmpl(*tp, where + ".podTemplatePath", nsv, *vols != nullptr);
      if (!t) return t.err();
      op.pods = *t;
      if (*vols) {
        // The first pod's claim and volume, so that a template the apiserver would refuse fails here.
        if (auto first = make_pod_with_volumes(**t, **vols, 0, 0); !first) return fail(where, first.err().message);
        op.volumes = *vols;
        storage_created_ = where;
      }
      auto gang = gang_of(n, where, i, nsv, op.count);
      if (!gang) return gang.err();
      if (*gang) {
        if (op.pods->compiled->in_group())
          return fail(where + ".podGroup", resolve(*tp) + ": the pod template already belongs to pod group \"" +
                                             op.pods->compiled->group_name + "\"");
        if (op.volumes)
          return fail(where + ".podGroup", "pod groups and persistentVolumeTemplatePath do not go together");
        // The op's PodGroups replace the cluster's objects, as a createAny's do.
        if (!storage_created_.empty())
          return fail(where + ".podGroup", "a createPods with podGroup cannot follow " + storage_created_ +
                                             ", which created storage objects (CSINodes, volumes, claims) its "
                                             "PodGroups would replace: move it before that op");
        op.gang = *gang;
        if (auto s = add_pod_groups(op, where); !s) return s.err();
      }
      auto cm = get_bool(n, "collectMetrics", where);
      if (!cm) return cm.err();
      op.collect_metrics = *cm;
      auto sw = get_bool(n, "skipWaitToCompletion", where);
      if (!sw) return sw.err();
      op.skip_wait = *sw;
    } else if (*code == "createAny") {
      if (auto s = only_keys(n, where, {"opcode", "templatePath"}); !s) return s.err();
      op.opcode = workload_opcode::create_any;
      auto tp = get_string(n, "templatePath", where, true);
      if (!tp) return tp.err();
      auto m = load_template(*tp, where + ".templatePath");
      if (!m) return m.err();
      if (!m->nodes.empty() || !m->pods.empty())
        return fail(where + ".templatePath", "createAny takes objects other than Nodes and Pods (use createNodes / createPods)");
      // A createAny's objects replace the cluster's, volumes and CSINodes included.
      if (!storage_created_.empty())
        return fail(where, "a createAny cannot follow " + storage_created_ +
                             ", which created storage objects (CSINodes, volumes, claims) it would replace: "
                             "move it before that op");
      auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
      append(created_.priority_classes, m->priority_classes);
      append(created_.namespaces, m->namespaces);
      append(created_.pdbs, m->pdbs);
      append(created_.pod_groups, m->pod_groups);
      append(created_.coscheduling_pod_groups, m->coscheduling_pod_groups);
      append(created_.workloads, m->workloads);
      append(created_.pvs, m->pvs);
      append(created_.pvcs, m->pvcs);
      append(created_.storage_classes, m->storage_classes);
      append(created_.csi_nodes, m->csi_nodes);
      append(created_.csi_drivers, m->csi_drivers);
      append(created_.csi_storage_capacities, m->csi_storage_capacities);
      auto in = compile_cluster(created_);
      if (!in) return fail(where + ".templatePath", in.err().message);
      op.objects = in->objects;
    } else if (*code == "churn") {
      if (auto s = only_keys(n, where, {"opcode", "mode", "number", "intervalMilliseconds", "templatePaths"}); !s)
        return s.err();
      op.opcode = workload_opcode::churn;
      auto mode = get_string(n, "mode", where, true);
      if (!mode) return mode.err();
      if (*mode != "recreate" && *mode != "create")
        return fail(where + ".mode", "must be recreate or create, got \"" + *mode + "\"");
      op.churn_recreate = *mode == "recreate";
      auto num = get_int(n, "number", where, 1, 1, 100000);
      if (!num) return num.err();
      op.churn_number = static_cast<size_t>(*num);
      auto iv = get_int(n, "intervalMilliseconds", where, 500, 1, 3600000);
      if (!iv) return iv.err();
      op.churn_interval_ms = static_cast<uint32_t>(*iv);
      YAML::Node tps = n["templatePaths"];
      if (!tps || !tps.IsSequence() || tps.size() == 0)
        return fail(where + ".templatePaths", "expected a non-empty list of template paths");
      for (size_t k = 0; k < tps.size(); ++k) {
        std::string w = where + ".templatePaths[" + std::to_string(k) + "]";
        std::string rel = tps[k].as<std::string>();
        auto m = load_template(rel, w);
        if (!m) return m.err();
        if (m->nodes.size() == 1 && m->pods.empty()) {
          auto t = node_tmpl(rel, w, {}, false);
          if (!t) return t.err();
          op.churn_nodes.push_back(*t);
        } else if (m->pods.size() == 1 && m->nodes.empty()) {
          auto t = pod_tmpl(rel, w, "namespace-" + std::to_string(i));
          if (!t) return t.err();
          op.churn_pods.push_back(*t);
        } else if (m->nodes.empty() && m->pods.empty()) {
          // Services and other objects: churning them changes nothing the scheduler's plugins
          // read per pod beyond the selector lists, which the workload's createAny ops cover.
        } else {
          return fail(w, "a churn template must hold exactly one Node or one Pod");
        }
      }
    } else if (*code == "barrier") {
      if (auto s = only_keys(n, where, {"opcode"}); !s) return s.err();
      op.opcode = workload_opcode::barrier;
    } else {
      return fail(where + ".opcode", "unknown opcode \"" + *code +
                                       "\" (known: createNodes, createPods, createAny, churn, barrier)");
    }
    return op;
  }

  std::string path_;
  std::filesystem::path dir_;
  std::vector<std::string> warnings_;
  cluster_manifests created_;  // every createAny object so far
  std::set<std::string> open_sets_;                  // competing sets with no barrier after them yet
  std::map<std::string, std::string> ended_sets_;    // competing set -> the barrier that ended it
  std::string storage_created_;  // the last op that created storage objects one by one ("" none)
};

}  // namespace

size_t workload::node_count() const {
  size_t n = 0;
  for (auto& op : ops)
    if (op.opcode == workload_opcode::create_nodes) n += op.count;
  return n;
}

size_t workload::measured_pod_count() const {
  size_t n = 0;
  for (auto& op : ops)
    if (op.opcode == workload_opcode::create_pods && op.collect_metrics) n += op.count;
  return n;
}

size_t workload::gang_count() const {
  size_t n = 0;
  for (auto& op : ops)
    if (op.opcode == workload_opcode::create_pods && op.gang) n += op.count / op.gang->size;
  return n;
}

size_t workload::init_pod_count() const {
  size_t n = 0;
  for (auto& op : ops)
    if (op.opcode == workload_opcode::create_pods && !op.collect_metrics) n += op.count;
  return n;
}

result<std::shared_ptr<node_info>> make_node(const node_template& t, size_t i) {
  auto node = std::make_shared<k8s::core::Node>(*t.proto);
  auto* meta = node->mutable_metadata();
  std::string name = t.fixed_name.empty() ? t.name_prefix + std::to_string(i) : t.fixed_name;
  meta->set_name(name);
  meta->clear_generate_name();
  auto* labels = meta->mutable_labels();
  if (t.hostname_label) (*labels)["kubernetes.io/hostname"] = name;
  for (auto& s : t.labels) {
    if (s.unique) (*labels)[s.key] = name;
    else (*labels)[s.key] = s.values[i % s.values.size()];
  }
  if (t.allocatable && !t.allocatable->node_allocatable.empty()) {
    auto* st = node->mutable_status();
    // The apiserver defaults a missing allocatable to the capacity before the strategy patches it.
    if (st->allocatable().empty()) *st->mutable_allocatable() = st->capacity();
    for (auto& [res, q] : t.allocatable->node_allocatable) (*st->mutable_allocatable())[res].set_string(q);
  }
  return compile_node(std::move(node));
}

pod_info_ptr make_pod(const pod_template& t, size_t i) {
  auto p = std::make_shared<pod_info>(*t.compiled);
  p->name = t.name_prefix + std::to_string(i);
  p->uid = p->ns + "/" + p->name;
  return p;
}

pod_info_ptr make_gang_pod(const pod_template& t, const gang_spec& g, size_t pod_number, size_t index) {
  auto p = std::make_shared<pod_info>(*t.compiled);
  p->name = t.name_prefix + std::to_string(pod_number);
  p->uid = p->ns + "/" + p->name;
  p->group_api = g.api;
  p->group_name = g.group_name(index / g.size);
  p->group_key = pod_group_key(g.api, p->ns, p->group_name);
  auto obj = std::make_shared<k8s::core::Pod>(*t.compiled->pod);
  if (g.api == pod_group_api::coscheduling) {
    (*obj->mutable_metadata()->mutable_labels())[coscheduling_pod_group_label] = p->group_name;
    std::vector<label_map::entry> labels = p->labels.entries();
    labels.emplace_back(coscheduling_pod_group_label, p->group_name);
    p->labels = label_map(std::move(labels));
  } else {
    obj->mutable_spec()->mutable_scheduling_group()->set_pod_group_name(p->group_name);
  }
  p->pod = std::move(obj);
  return p;
}

result<workload> load_workload(const std::string& path) { return workload_loader(path).load(); }

workload default_workload() {
  // scheduler_perf's node-default.yaml and pod-default.yaml.
  static const char* node_yaml = R"(
apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-
spec: {}
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
  conditions:
  - {status: "True", type: Ready}
  phase: Running
)";
  static const char* pod_yaml = R"(
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits: {cpu: 100m, memory: 500Mi}
      requests: {cpu: 100m, memory: 500Mi}
)";
  auto node = std::make_shared<k8s::core::Node>();
  auto pod = std::make_shared<k8s::core::Pod>();
  auto sn = codec::decode_node(YAML::Load(node_yaml), *node);
  auto sp = codec::decode_node(YAML::Load(pod_yaml), *pod);
  if (!sn || !sp) return {};
  auto nt = std::make_shared<node_template>();
  nt->proto = node;
  nt->name_prefix = "scheduler-perf-";
  nt->hostname_label = true;
  auto make_pods = [&](const std::string& ns) {
    auto p = std::make_shared<k8s::core::Pod>(*pod);
    p->mutable_metadata()->set_namespace_(ns);
    p->mutable_metadata()->set_name("pod-template");
    auto c = compile_pod(p);
    auto t = std::make_shared<pod_template>();
    t->compiled = c ? *c : nullptr;
    t->name_prefix = "pod-";
    return std::shared_ptr<const pod_template>(t);
  };
  workload w;
  w.name = "SchedulingBasic";
  w.description = "5000 nodes, 1000 init pods, 10000 measured pods (scheduler_perf SchedulingBasic/5000Nodes_10000Pods)";
  w.threshold = 680;
  workload_op nodes;
  nodes.opcode = workload_opcode::create_nodes;
  nodes.where = "SchedulingBasic: ops[0]";
  nodes.count = 5000;
  nodes.nodes = nt;
  workload_op init;
  init.opcode = workload_opcode::create_pods;
  init.where = "SchedulingBasic: ops[1]";
  init.count = 1000;
  init.pods = make_pods("namespace-1");
  workload_op measured = init;
  measured.where = "SchedulingBasic: ops[2]";
  measured.count = 10000;
  measured.pods = make_pods("namespace-2");
  measured.collect_metrics = true;
  w.ops = {nodes, init, measured};
  return w;
}

}  // namespace kas
