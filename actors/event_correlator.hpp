#pragma once
// event_correlator: what client-go's EventCorrelator (tools/record/events_cache.go) does to the
// Events kube-scheduler records, so the cluster stores the same Events kube's apiserver would hold.
// CAF-free; the embedded cluster owns one. For each incoming Event, in client-go's order:
//   1. aggregate: events on one object with the same source, type and reason but different messages
//      are tracked within 10 minutes; from the 10th distinct message on, the event is replaced by
//      one whose message is "(combined from similar events): <message>", keyed without the message;
//   2. observe (dedupe): an Event with the same key as a stored one increments that Event's count
//      and moves its lastTimestamp (a PATCH), instead of creating a new one;
//   3. spam filter: a token bucket per source+object+type (burst 25, refill 1 per 5 minutes) drops
//      the write once the object has produced too many.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "actors/protocol.hpp"

namespace kas {

class event_correlator {
public:
  using clock = std::chrono::system_clock;
  static constexpr size_t max_similar = 10;                         // defaultAggregateMaxEvents
  static constexpr std::chrono::seconds aggregate_interval{600};    // defaultAggregateIntervalInSeconds
  static constexpr double spam_burst = 25;                          // defaultSpamBurst
  static constexpr double spam_qps = 1.0 / 300.0;                   // defaultSpamQPS
  static constexpr const char* combined_prefix = "(combined from similar events): ";
  static constexpr const char* source = "default-scheduler";        // Event.source.component

  struct verdict {
    enum kind { create, update, skip } what = skip;
    cluster_event_record event;  // for create: the Event to store; for update: the new count/time/message
    size_t index = 0;            // for update: which stored Event
  };

  // `next_index` is the position a created Event will take in the store.
  verdict correlate(const cluster_event_record& ev, clock::time_point now, size_t next_index);

private:
  struct aggregate_record {
    std::set<std::string> messages;
    clock::time_point last{};
  };
  struct observed {
    int32_t count = 0;
    clock::time_point first{};
    size_t index = 0;
  };
  struct bucket {
    double tokens = spam_burst;
    clock::time_point last{};
  };
  std::unordered_map<std::string, aggregate_record> aggregates_;
  std::unordered_map<std::string, observed> observed_;
  std::unordered_map<std::string, bucket> spam_;
};

}  // namespace kas
