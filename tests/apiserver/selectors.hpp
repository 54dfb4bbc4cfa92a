#pragma once
// Label and field selectors as kube-apiserver parses them from ?labelSelector= and ?fieldSelector=.
// Labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists), `!k` (absent); commas
// outside parentheses are AND. Fields: `path=v`, `path==v`, `path!=v` for metadata.name,
// metadata.namespace and the per-kind fields kube supports that the scheduler uses (pods:
// spec.nodeName, status.phase, spec.schedulerName; events: involvedObject.*, reason, type); commas are
// AND. Parse errors name the offending term; unknown field labels are 400s, as upstream.
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::testapi {

struct kind_info;
struct stored_object;

// The field paths a field selector may name for kind k (besides metadata.name/namespace); the store
// extracts these at write time.
const std::vector<std::string>& selectable_fields(const kind_info& k);

class label_selector {
public:
  static result<label_selector> parse(const std::string& text);
  bool matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return terms_.empty(); }

private:
  enum class op { eq, ne, in, notin, exists, absent };
  struct term {
    std::string key;
    op o = op::eq;
    std::vector<std::string> values;
  };
  std::vector<term> terms_;
};

class field_selector {
public:
  static result<field_selector> parse(const std::string& text, const kind_info& kind);
  bool matches(const stored_object& object) const;
  bool empty() const { return terms_.empty(); }

private:
  struct term {
    std::string path;
    bool equal = true;
    std::string value;
  };
  std::vector<term> terms_;
};

}  // namespace kas::testapi
