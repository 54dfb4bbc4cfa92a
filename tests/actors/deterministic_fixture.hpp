#pragma once
// Deterministic actor tests: CAF 0.17's test_coordinator ("scheduler.policy" = testing) runs every
// actor of the system on the test's own thread, one message at a time, only when the test says so.
// Nothing sleeps and no thread races: a test injects a message, steps it, and checks what came out.
//
// Usage (GoogleTest; CAF's caf/test/dsl.hpp needs CAF's own unit-test engine, so this fixture offers
// the same three moves without it):
//
//   class queue_actor_test : public kas::test::deterministic_fixture {};
//   TEST_F(queue_actor_test, pops_a_pod) {
//     auto w = make_wiring();                          // a pipeline whose every handle is a recorder
//     w->queue = track(spawn_scheduling_queue(sys, frameworks(), opts, w));   // the actor under test
//     send(w->queue, event_atom::value, batch({pod_added(p)}));  // enqueue only; nothing runs yet
//     step<event_atom, cluster_change_batch_ptr>(w->queue);  // runs exactly that message (fails on another)
//     auto r = ask<queue_stats>(w->queue, stats_atom::value);  // send, run(), take the reply
//     send_as(log("driver"), w->queue, pop_atom::value, 1u);   // a reply lands in a recorder's log
//     run();                                            // every pending message, no timers
//     EXPECT_EQ(log("driver").count<std::vector<queued_pod_ptr>>(), 1u);
//   }
//
// Recorders stand in for the actors a test does not run: each keeps every message it received, in
// order (recorder_log). make_wiring() names them "cluster", "cache", "queue", "worker-0", "permit",
// "binder-0" and "recorder"; replace a handle with the real actor under test, and wire more real
// actors the same way (a cycle-driver test spawns the driver with a recorder for the workers; a
// permit test the coordinator with recorders for the binders and the queue). A recorder answers
// requests only when given a responder (recorder(name, fn)).
//
// Timers: delayed_send goes to the test clock and fires only on tick() (the next pending timeout)
// or advance(d). Actors that read std::chrono clocks directly (queue backoff, cache expiry) still
// see wall time; give them zero durations when a test needs an expiry to have passed.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/handles.hpp"
#include "config/profile.hpp"
#include "observability/kube_metrics.hpp"
#include "observability/metrics.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::test {

// What one recorder received, in order.
struct recorder_log {
  std::vector<caf::message> messages;

  // Messages whose content is exactly Ts... (atoms by value, e.g. event_atom).
  template <class... Ts>
  size_t count() const {
    size_t n = 0;
    for (auto& m : messages)
      if (m.match_elements<Ts...>()) ++n;
    return n;
  }
  // Every message whose content is exactly Ts..., as tuples.
  template <class... Ts>
  std::vector<std::tuple<Ts...>> all() const {
    std::vector<std::tuple<Ts...>> out;
    for (auto& m : messages)
      if (m.match_elements<Ts...>()) out.push_back(m.get_as_tuple<Ts...>());
    return out;
  }
  // The last message whose content is exactly Ts...; nullopt when there is none.
  template <class... Ts>
  std::optional<std::tuple<Ts...>> last() const {
    for (auto it = messages.rbegin(); it != messages.rend(); ++it)
      if (it->match_elements<Ts...>()) return it->get_as_tuple<Ts...>();
    return std::nullopt;
  }
};

// Answers a request made to a recorder; an empty message means no answer.
using responder = std::function<caf::message(const caf::message&)>;

// A cluster_client that binds nothing: frameworks need one to be built, queue and cache tests never
// bind. Calls `done` with success at once.
class null_cluster_client : public fw::cluster_client {
public:
  void bind(const pod_info&, const std::string&, std::function<void(fw::status)> done) override { done(fw::status::ok()); }
  void delete_pod(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
  void set_nominated_node(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
};

struct deterministic_config : caf::actor_system_config {
  deterministic_config() {
    set("scheduler.policy", caf::atom("testing"));
    set("logger.verbosity", caf::atom("quiet"));
    set("logger.file-verbosity", caf::atom("quiet"));
  }
};

// The metrics, the client and the frameworks are declared before the actor system: actors point into
// them, so they must outlive it.
struct deterministic_fixture_base {
  obs::metrics_registry registry;
  std::shared_ptr<obs::kube_metrics> metrics = std::make_shared<obs::kube_metrics>(registry);
  null_cluster_client client;
  std::vector<fw::framework_ptr> frameworks_built;
};

class deterministic_fixture : public ::testing::Test, protected deterministic_fixture_base {
public:
  deterministic_fixture()
      : sys(cfg), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())), self(sys, true) {}

  ~deterministic_fixture() override {
    for (auto& a : tracked_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& [name, r] : recorders_) caf::anon_send_exit(r.handle, caf::exit_reason::user_shutdown);
    run();
    // Timers still hold messages for actors that are gone; nothing must wait for them.
    sys.await_actors_before_shutdown(false);
  }

  // --- stepping -----------------------------------------------------------------------------------

  // Runs every pending message (no timers); returns how many ran.
  size_t run() { return sched.run(); }

  // Fires the next pending timer (delayed_send) and runs what it caused; false when none is pending.
  bool tick() {
    if (!sched.trigger_timeout()) return false;
    run();
    return true;
  }

  // Moves the test clock on, fires every timer due, and runs what they caused.
  size_t advance(caf::timespan d) {
    size_t n = sched.advance_time(d);
    run();
    return n;
  }

  // The next message `h` handles must be exactly Ts...: runs that one message alone and returns
  // its content. Fails the test (and runs nothing) when `h` has no message or another is next.
  template <class... Ts, class Handle>
  std::optional<std::tuple<Ts...>> step(const Handle& h) {
    auto* ptr = caf::actor_cast<caf::abstract_actor*>(h);
    if (!ptr || !sched.prioritize(h)) {
      ADD_FAILURE() << "no message pending for " << (ptr ? actor_name(ptr) : "a null handle");
      return std::nullopt;
    }
    auto* next = ptr->peek_at_next_mailbox_element();
    if (!next || !next->content().template match_elements<Ts...>()) {
      ADD_FAILURE() << actor_name(ptr) << "'s next message is "
                    << (next ? caf::to_string(next->content()) : std::string("none"));
      return std::nullopt;
    }
    std::tuple<Ts...> out = next->content().template get_as_tuple<Ts...>();  // a copy: the handler may move the content
    sched.run_once();
    return out;
  }

  static std::string actor_name(caf::abstract_actor* ptr) {
    auto* local = dynamic_cast<caf::local_actor*>(ptr);
    return local ? local->name() : "actor " + std::to_string(ptr->id());
  }

  // Whether `h` has a message waiting.
  template <class Handle>
  bool has_pending(const Handle& h) {
    auto* ptr = caf::actor_cast<caf::abstract_actor*>(h);
    return ptr && ptr->peek_at_next_mailbox_element() != nullptr;
  }

  // --- messages -----------------------------------------------------------------------------------

  template <class Handle, class... Ts>
  void send(const Handle& h, Ts&&... xs) {
    caf::anon_send(h, std::forward<Ts>(xs)...);
  }

  // Sends from `from` (a recorder): the receiver's reply lands in that recorder's log.
  template <class Handle, class... Ts>
  void send_as(const std::string& from, const Handle& h, Ts&&... xs) {
    caf::send_as(recorder_handle(from), h, std::forward<Ts>(xs)...);
  }

  // Sends `xs...` to `h`, runs everything, and returns the reply as T. Fails the test (nullopt) when
  // `h` did not answer while the system ran, or answered with an error.
  template <class T, class Handle, class... Ts>
  std::optional<T> ask(const Handle& h, Ts&&... xs) {
    self->send(h, std::forward<Ts>(xs)...);
    run();
    std::optional<T> out;
    self->receive([&](T& x) { out = std::move(x); },
                  [&](caf::error& e) { ADD_FAILURE() << "error reply: " << sys.render(e); },
                  caf::after(std::chrono::seconds(0)) >> [&] { ADD_FAILURE() << "no reply"; });
    return out;
  }

  // --- recorders and wiring -----------------------------------------------------------------------

  // The recorder named `name` (spawned on first use); `answer` handles requests made to it.
  caf::actor recorder_handle(const std::string& name, responder answer = {}) {
    auto it = recorders_.find(name);
    if (it != recorders_.end()) return it->second.handle;
    auto log_ptr = std::make_shared<recorder_log>();
    auto handle = sys.spawn([log_ptr, answer](caf::event_based_actor* self) -> caf::behavior {
      self->set_default_handler([log_ptr, answer](caf::scheduled_actor*, caf::message_view& x) -> caf::result<caf::message> {
        auto m = x.move_content_to_message();
        log_ptr->messages.push_back(m);
        if (answer) return answer(m);
        return caf::message{};
      });
      // Matches nothing the pipeline sends: every message goes to the default handler.
      return {[](caf::atom_constant<caf::atom("recnever")>) {}};
    });
    recorders_.emplace(name, recorder{handle, log_ptr});
    return handle;
  }

  // What the recorder named `name` received so far.
  recorder_log& log(const std::string& name) {
    recorder_handle(name);
    return *recorders_.at(name).log;
  }

  // A pipeline whose every handle is a recorder (see the top of the file), with its own metrics
  // registry, so nothing adds to obs::default_registry().
  std::shared_ptr<pipeline> make_wiring(const std::vector<std::string>& profiles = {"default-scheduler"}) {
    auto w = std::make_shared<pipeline>();
    w->cluster = caf::actor_cast<cluster_actor>(recorder_handle("cluster"));
    w->cache = caf::actor_cast<snapshot_cache_actor>(recorder_handle("cache"));
    w->queue = caf::actor_cast<queue_actor>(recorder_handle("queue"));
    w->workers.push_back(caf::actor_cast<worker_actor>(recorder_handle("worker-0")));
    w->permit = caf::actor_cast<permit_actor>(recorder_handle("permit"));
    w->binders.push_back(caf::actor_cast<binder_actor>(recorder_handle("binder-0")));
    w->recorder = caf::actor_cast<recorder_actor>(recorder_handle("recorder"));
    w->registry = &registry;
    w->metrics = metrics;
    w->plugin_durations = std::make_shared<const plugin_duration_sink>(*metrics);
    w->series = std::make_shared<const scheduler_series>(registry, *metrics, profiles);
    return w;
  }

  // The default profile's framework (kube-scheduler without a config file).
  std::vector<fw::framework_ptr> frameworks() {
    if (frameworks_built.empty()) {
      fw::handle h;
      h.client = fw::unowned_client(&client);
      auto f = fw::framework::build(default_profile(), fw::in_tree_registry(), h, "profiles[0]");
      if (!f) throw std::runtime_error(f.err().message);
      frameworks_built.push_back(*f);
    }
    return frameworks_built;
  }

  // Kills `h` with the fixture (and returns it), for actors spawned by the test.
  template <class Handle>
  Handle track(Handle h) {
    tracked_.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }

  // --- cluster changes, as the cluster source compiles them -----------------------------------------

  cluster_change_ptr node_added(const node_info_ptr& n) {
    auto c = std::make_shared<cluster_change>();
    c->type = cluster_event_type::node_add;
    c->new_node = n;
    c->resource_version = ++resource_version_;
    return c;
  }
  cluster_change_ptr node_updated(const node_info_ptr& old_n, const node_info_ptr& new_n) {
    auto c = std::make_shared<cluster_change>();
    c->type = cluster_event_type::node_update;
    c->old_node = old_n;
    c->new_node = new_n;
    c->resource_version = ++resource_version_;
    return c;
  }
  cluster_change_ptr pod_added(const pod_info_ptr& p) {
    auto c = std::make_shared<cluster_change>();
    c->type = cluster_event_type::pod_add;
    c->new_pod = p;
    c->resource_version = ++resource_version_;
    return c;
  }
  cluster_change_ptr pod_deleted(const pod_info_ptr& p) {
    auto c = std::make_shared<cluster_change>();
    c->type = cluster_event_type::pod_delete;
    c->old_pod = p;
    c->resource_version = ++resource_version_;
    return c;
  }
  // The end of the initial list (an informer's HasSynced).
  cluster_change_ptr synced() {
    auto c = std::make_shared<cluster_change>();
    c->type = cluster_event_type::synced;
    c->resource_version = resource_version_;
    return c;
  }
  static cluster_change_batch_ptr batch(std::vector<cluster_change_ptr> changes) {
    auto b = std::make_shared<cluster_change_batch>();
    b->changes = std::move(changes);
    return b;
  }

  // --- members ------------------------------------------------------------------------------------

  deterministic_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  caf::scoped_actor self;

private:
  struct recorder {
    caf::actor handle;
    std::shared_ptr<recorder_log> log;
  };
  std::map<std::string, recorder> recorders_;
  std::vector<caf::actor> tracked_;
  uint64_t resource_version_ = 0;
};

}  // namespace kas::test
