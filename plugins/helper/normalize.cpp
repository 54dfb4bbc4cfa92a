#include "plugins/helper/normalize.hpp"

namespace kas::plugins::helper {

namespace {

// One body for node_score entries and plain rows, so the two cannot drift apart.
template <class Score>
void normalize(int64_t max_priority, bool reverse, size_t n, Score score) {
  int64_t max_count = 0;
  for (size_t i = 0; i < n; ++i)
    if (score(i) > max_count) max_count = score(i);
  if (max_count == 0) {
    if (reverse)
      for (size_t i = 0; i < n; ++i) score(i) = max_priority;
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t v = max_priority * score(i) / max_count;
    score(i) = reverse ? max_priority - v : v;
  }
}

}  // namespace

void default_normalize_score(int64_t max_priority, bool reverse, std::vector<fw::node_score>& scores) {
  normalize(max_priority, reverse, scores.size(), [&](size_t i) -> int64_t& { return scores[i].score; });
}

void default_normalize_score(int64_t max_priority, bool reverse, int64_t* scores, size_t n) {
  normalize(max_priority, reverse, n, [&](size_t i) -> int64_t& { return scores[i]; });
}

}  // namespace kas::plugins::helper
