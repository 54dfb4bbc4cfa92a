#include "plugins/framework/cycle_state.hpp"

namespace kas::fw {

void cycle_state::write(std::string_view key, std::shared_ptr<state_data> data) {
  for (auto& e : entries_) {
    if (e.first == key) {
      e.second = std::move(data);
      return;
    }
  }
  // A cycle writes one entry per PreFilter and PreScore plugin (about a dozen in the default
  // profile): one allocation instead of the vector's growth steps.
  if (entries_.empty()) entries_.reserve(16);
  entries_.emplace_back(key, std::move(data));
}

state_data* cycle_state::read_slow(std::string_view key) const {
  for (auto& e : entries_)
    if (e.first == key) return e.second.get();
  return nullptr;
}

void cycle_state::erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return;
    }
  }
}

cycle_state cycle_state::clone() const {
  cycle_state out;
  out.entries_.reserve(entries_.size());
  for (auto& e : entries_) out.entries_.emplace_back(e.first, e.second ? e.second->clone() : nullptr);
  out.skip_filter_mask = skip_filter_mask;
  out.skip_score_mask = skip_score_mask;
  out.record_plugin_metrics = record_plugin_metrics;
  out.assumed_storage = assumed_storage;
  out.gang = gang;
  out.gang_domain = gang_domain;
  out.gang_tried = gang_tried;
  out.snapshot_ = snapshot_;
  return out;
}

}  // namespace kas::fw
