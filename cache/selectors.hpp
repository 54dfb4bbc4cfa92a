#pragma once
// Compiled node selectors (core/v1 NodeSelector) and label selectors (meta/v1 LabelSelector).
// Values for Gt/Lt are parsed at compile time; an invalid requirement compiles to `invalid = true`
// and never matches (kube treats a parse error as a non-match).
#include <cstdint>
#include <string>
#include <vector>

#include "cache/labels.hpp"

namespace kas {

enum class selector_op { in, not_in, exists, does_not_exist, gt, lt };

struct selector_requirement {
  std::string key;
  selector_op op = selector_op::in;
  std::vector<std::string> values;
  int64_t number = 0;  // for gt/lt
  bool invalid = false;
};

// One NodeSelectorTerm: every requirement must match (AND). matchFields only knows metadata.name.
struct node_selector_term {
  std::vector<selector_requirement> match_expressions;
  std::vector<selector_requirement> match_fields;
  // An empty term (no expressions, no fields) matches nothing, as in kube.
  bool matches(const label_map& node_labels, const std::string& node_name) const;
};

// A NodeSelector: terms are ORed.
struct node_selector {
  std::vector<node_selector_term> terms;
  bool matches(const label_map& node_labels, const std::string& node_name) const;
};

struct preferred_scheduling_term {
  int32_t weight = 0;
  node_selector_term preference;
};

bool requirement_matches(const selector_requirement& r, const label_map& labels);

// meta/v1 LabelSelector: matchLabels become `in` requirements. `nothing` = nil selector (matches nothing);
// an empty, non-nil selector matches everything.
struct label_selector {
  std::vector<selector_requirement> requirements;
  bool nothing = false;
  bool matches(const label_map& labels) const;
};

}  // namespace kas
