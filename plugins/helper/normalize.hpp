#pragma once
// Shared score helpers (kube-scheduler's framework/plugins/helper/normalize_score.go).
#include <cstdint>
#include <vector>

#include "plugins/framework/interfaces.hpp"

namespace kas::plugins::helper {

// kube's DefaultNormalizeScore: scales scores from [0, max(scores)] to [0, max_priority] with
// integer division; with `reverse`, each score becomes max_priority - score. When every score is 0,
// scores stay 0, or all become max_priority when reversed. Scores are assumed non-negative.
void default_normalize_score(int64_t max_priority, bool reverse, std::vector<fw::node_score>& scores);
// The same over a plain row of n scores (a plugin's normalize_row).
void default_normalize_score(int64_t max_priority, bool reverse, int64_t* scores, size_t n);

}  // namespace kas::plugins::helper
