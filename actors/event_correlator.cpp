#include "actors/event_correlator.hpp"

#include <algorithm>

namespace kas {

namespace {

// client-go joins the key fields with "" (no separator); a separator that cannot occur in names keeps
// distinct objects apart here.
std::string correlation_key(std::initializer_list<const std::string*> parts) {
  std::string k;
  for (auto* p : parts) k.append(*p).push_back('\x1f');
  return k;
}

}  // namespace

event_correlator::verdict event_correlator::correlate(const cluster_event_record& in, clock::time_point now,
                                                      size_t next_index) {
  static const std::string src = source;
  static const std::string kind = "Pod";
  // The involved object is the pod (uid and ns/name).
  std::string object = correlation_key({&src, &kind, &in.pod_key, &in.pod_uid});
  cluster_event_record ev = in;
  ev.count = 1;
  ev.first_timestamp = ev.last_timestamp = now;

  // 1. EventAggregate: aggregateKey omits the message, localKey is the message.
  std::string aggregate_key = object + correlation_key({&in.type, &in.reason});
  std::string key = aggregate_key + in.message;  // getEventKey: every field, the message included
  auto& rec = aggregates_[aggregate_key];
  if (now - rec.last > aggregate_interval) rec = aggregate_record{};
  rec.messages.insert(in.message);
  rec.last = now;
  if (rec.messages.size() >= max_similar) {
    rec.messages.erase(rec.messages.begin());  // do not grow the set past the threshold
    ev.message = combined_prefix + in.message;
    key = aggregate_key;
  }

  // 2. eventObserve: a known key is a count increment on the stored Event.
  verdict v;
  auto it = observed_.find(key);
  if (it != observed_.end()) {
    it->second.count++;
    ev.count = it->second.count;
    ev.first_timestamp = it->second.first;
    v.what = verdict::update;
    v.index = it->second.index;
  } else {
    observed_[key] = observed{1, now, next_index};
    v.what = verdict::create;
  }

  // 3. EventSourceObjectSpamFilter: one token bucket per source+object+type.
  auto& b = spam_[object + in.type];
  if (b.last != clock::time_point{})
    b.tokens = std::min(spam_burst, b.tokens + std::chrono::duration<double>(now - b.last).count() * spam_qps);
  b.last = now;
  if (b.tokens < 1) {
    // Skipped: client-go has already counted it in its cache, so a later write carries the total.
    if (v.what == verdict::create) observed_.erase(key);
    v.what = verdict::skip;
    return v;
  }
  b.tokens -= 1;
  v.event = std::move(ev);
  return v;
}

}  // namespace kas
