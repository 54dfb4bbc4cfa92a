#include "plugins/helper/normalize.hpp"

namespace kas::plugins::helper {

void default_normalize_score(int64_t max_priority, bool reverse, std::vector<fw::node_score>& scores) {
  int64_t max_count = 0;
  for (auto& s : scores)
    if (s.score > max_count) max_count = s.score;
  if (max_count == 0) {
    if (reverse)
      for (auto& s : scores) s.score = max_priority;
    return;
  }
  for (auto& s : scores) {
    int64_t v = max_priority * s.score / max_count;
    s.score = reverse ? max_priority - v : v;
  }
}

}  // namespace kas::plugins::helper
