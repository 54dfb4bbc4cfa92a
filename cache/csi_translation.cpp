// kube's csi-translation-lib, as far as csi_translation.hpp declares it. Two volumes, one in-tree and
// one CSI, that are the same disk must end up with the same driver/handle, so a disk is counted
// once against the driver's limit.
#include <algorithm>
#include <array>
#include <set>

#include "cache/csi_translation.hpp"

namespace kas::csi_migration {

namespace {

struct plugin_entry {
  std::string_view plugin;
  std::string_view driver;
  bool migration_ga;  // isCSIMigrationOn answers yes (given a CSINode)
  std::string_view topology_key = {};  // where TranslateInTreePVToCSI moves the zone
};

// Every in-tree plugin kube has translation logic for. Azure File and vSphere translate but their
// migration never counts here (isCSIMigrationOn lists neither); they matter for a StorageClass
// provisioner, which is then not counted at all.
constexpr std::array<plugin_entry, 7> plugins = {{
  {aws_ebs_plugin, aws_ebs_driver, true, "topology.ebs.csi.aws.com/zone"},
  {gce_pd_plugin, gce_pd_driver, true, "topology.gke.io/zone"},
  {azure_disk_plugin, azure_disk_driver, true},
  {cinder_plugin, cinder_driver, true, "topology.cinder.csi.openstack.org/zone"},
  {"kubernetes.io/portworx-volume", "pxd.portworx.com", true},
  {"kubernetes.io/azure-file", "file.csi.azure.com", false},
  {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", false},
}};

const plugin_entry* find_plugin(std::string_view plugin) {
  for (const auto& p : plugins)
    if (p.plugin == plugin) return &p;
  return nullptr;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<vol-id>", "aws:///<vol-id>" or a bare id.
result<std::string> ebs_volume_id(const std::string& id) {
  constexpr std::string_view scheme = "aws://";
  if (!starts_with(id, scheme)) return id;
  // The URL's path: after the host, before any query or fragment.
  std::string_view rest = std::string_view(id).substr(scheme.size());
  size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (size_t cut = path.find_first_of("?#"); cut != std::string_view::npos) path = path.substr(0, cut);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  // kube accepts vol-<anything without a slash> only.
  if (!starts_with(path, "vol-") || path.find('/') != std::string_view::npos)
    return error{"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (" + id + ")"};
  return std::string(path);
}

constexpr std::string_view unspecified = "UNSPECIFIED";

std::string gce_zonal_handle(std::string_view zone, const std::string& pd) {
  return "projects/" + std::string(unspecified) + "/zones/" + std::string(zone) + "/disks/" + pd;
}

std::vector<std::string> split(const std::string& s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    if (at == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
}

// getRegionFromZones: every zone is {locale}-{region}-{zone}, all in one region.
result<std::string> gce_region_of(const std::vector<std::string>& zones) {
  std::set<std::string> regions;
  for (const auto& z : zones) {
    auto parts = split(z, "-");
    if (parts.size() != 3)
      return error{
        "failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: " + z};
    regions.insert(parts[0] + "-" + parts[1]);
  }
  if (regions.size() != 1) return error{"failed to get region from zones: multiple or no regions gotten from zones"};
  return *regions.begin();
}

// A GCE PD PV's handle names its zone (or region, for a regional disk) from the PV's zone label.
result<std::string> gce_pv_handle(const pv_info& pv) {
  const std::string* label = pv.labels.get("failure-domain.beta.kubernetes.io/zone");
  if (!label || label->empty()) label = pv.labels.get("topology.kubernetes.io/zone");
  auto zones = split(label ? *label : std::string(), "__");
  if (zones.size() == 1 && !zones[0].empty()) return gce_zonal_handle(zones[0], pv.source.id);
  if (zones.size() > 1) {
    auto region = gce_region_of(zones);
    if (!region) return region.err();
    return "projects/" + std::string(unspecified) + "/regions/" + *region + "/disks/" + pv.source.id;
  }
  return gce_zonal_handle(unspecified, pv.source.id);
}

}  // namespace

std::string_view in_tree_plugin(volume_source::kind_t kind) {
  switch (kind) {
    case volume_source::aws_ebs: return aws_ebs_plugin;
    case volume_source::gce_pd: return gce_pd_plugin;
    case volume_source::azure_disk: return azure_disk_plugin;
    case volume_source::cinder: return cinder_plugin;
    default: return {};
  }
}

bool is_migratable_plugin(std::string_view plugin) { return find_plugin(plugin) != nullptr; }

std::string_view csi_driver_of(std::string_view plugin) {
  const auto* p = find_plugin(plugin);
  return p ? p->driver : std::string_view{};
}

bool migration_ga(std::string_view plugin) {
  const auto* p = find_plugin(plugin);
  return p && p->migration_ga;
}

bool migration_on(const csi_node_info* csi_node, std::string_view plugin) {
  return csi_node && migration_ga(plugin);
}

bool migrated_on_node(const csi_node_info* csi_node, std::string_view plugin) {
  if (!csi_node || !migration_ga(plugin)) return false;
  const auto& listed = csi_node->migrated_plugins;
  return std::find(listed.begin(), listed.end(), plugin) != listed.end();
}

result<std::string> inline_volume_handle(const volume_source& source) {
  switch (source.kind) {
    case volume_source::aws_ebs: return ebs_volume_id(source.id);
    // An inline PD names no zone: the driver repairs the handle from the node's.
    case volume_source::gce_pd: return gce_zonal_handle(unspecified, source.id);
    case volume_source::azure_disk:  // the disk URI
    case volume_source::cinder: return source.id;
    default: return error{"could not find in-tree plugin translation logic"};
  }
}

result<std::string> pv_volume_handle(const pv_info& pv) {
  switch (pv.source.kind) {
    case volume_source::aws_ebs: return ebs_volume_id(pv.source.id);
    case volume_source::gce_pd: return gce_pv_handle(pv);
    case volume_source::azure_disk:
    case volume_source::cinder: return pv.source.id;
    default: return error{"could not find in-tree plugin translation logic for " + pv.name};
  }
}

std::string_view csi_topology_key(std::string_view plugin) {
  const auto* p = find_plugin(plugin);
  return p ? p->topology_key : std::string_view{};
}

namespace {

constexpr std::string_view zone_ga = "topology.kubernetes.io/zone";
constexpr std::string_view zone_beta = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view region_ga = "topology.kubernetes.io/region";
constexpr std::string_view region_beta = "failure-domain.beta.kubernetes.io/region";

bool names_key(const std::optional<node_selector>& s, std::string_view key) {
  if (!s) return false;
  for (const auto& t : s->terms)
    for (const auto& r : t.match_expressions)
      if (r.key == key) return true;
  return false;
}

// getTopologyValues: whether any requirement on `key` lists a value.
bool has_values(const node_selector& s, std::string_view key) {
  for (const auto& t : s.terms)
    for (const auto& r : t.match_expressions)
      if (r.key == key && !r.values.empty()) return true;
  return false;
}

void rename_key(node_selector& s, std::string_view from, std::string_view to) {
  for (auto& t : s.terms)
    for (auto& r : t.match_expressions)
      if (r.key == from) r.key = std::string(to);
}

}  // namespace

std::optional<node_selector> translated_node_affinity(const pv_info& pv, std::string_view csi_key) {
  if (csi_key.empty()) return std::nullopt;
  // getTopologyLabel: the affinity's zone key decides, then the PV's labels; GA by default.
  const std::optional<node_selector>& affinity = pv.node_affinity;
  bool beta = !names_key(affinity, zone_ga) &&
              (names_key(affinity, zone_beta) || (!pv.labels.get(zone_ga) &&
                                                  pv.labels.get(zone_beta)));
  std::string_view zone_key = beta ? zone_beta : zone_ga;
  node_selector out = affinity.value_or(node_selector{});
  bool changed = false;
  if (affinity && has_values(*affinity, zone_key)) {
    rename_key(out, zone_key, csi_key);
    changed = true;
  } else if (const std::string* label = pv.labels.get(zone_key)) {
    // addTopology: the label's zones, trimmed, without blanks and duplicates, sorted.
    std::set<std::string> zones;
    for (auto& z : split(*label, "__")) {
      size_t b = z.find_first_not_of(" \t\n\r\v\f"), e = z.find_last_not_of(" \t\n\r\v\f");
      if (b != std::string::npos) zones.insert(z.substr(b, e - b + 1));
    }
    if (!zones.empty()) {
      if (out.terms.empty()) out.terms.emplace_back();
      selector_requirement r;
      r.key = std::string(csi_key);
      r.op = selector_op::in;
      r.values.assign(zones.begin(), zones.end());
      for (auto& t : out.terms) t.match_expressions.push_back(r);
      changed = true;
    }
  }
  // A beta region moves to the GA key, so nodes that carry only GA labels still match.
  if (beta && has_values(out, region_beta)) {
    rename_key(out, region_beta, region_ga);
    changed = true;
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace kas::csi_migration
