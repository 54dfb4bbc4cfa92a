// The reflector (client/reflector.hpp) against a scripted list/watch server (tests/client/
// list_watch_peer.py, Python's HTTPS server with certificates from client/pki.hpp), in JSON and in
// protobuf: paged lists and the synced mark, watch events, bookmarks, 410 Gone and the relist that
// reconciles what changed meanwhile, expired continue tokens, closed streams, errors and backoff,
// undecodable bodies, and stop/destruction with requests in flight.
//
// The executor is a queue the test thread drains, so every reflector callback runs on the test
// thread, as it would on its owning actor. Waits are "until this many deltas arrived", bounded by a
// generous deadline that only turns a hang into a failure.
#include "client/reflector.hpp"
#include "tests/client/python_peer.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>

#include "client/pki.hpp"
#include "messages/k8s/core.pb.h"

namespace kas::api {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const pki::key_pair& server_cert(std::string* ca_pem) {
  static pki::key_pair ca = *pki::make_ca("kas-reflector-test-ca");
  static pki::key_pair server = [] {
    pki::cert_request s;
    s.common_name = "localhost";
    s.ip_addresses = {"127.0.0.1"};
    return *pki::issue(ca, s);
  }();
  *ca_pem = ca.cert_pem;
  return server;
}

// The Python peer: ready once it printed its port; ended with SIGTERM and a blocking waitpid.
class peer {
public:
  peer() {
    char tmpl[] = "/tmp/kas-lw-peer-XXXXXX";
    dir_ = mkdtemp(tmpl);
    const auto& kp = server_cert(&ca_pem_);
    auto cert = (dir_ / "server.crt").string(), key = (dir_ / "server.key").string();
    std::ofstream(cert) << kp.cert_pem;
    std::ofstream(key) << kp.key_pem;
    child_ = std::make_unique<api::testing::python_peer>("list_watch_peer.py",
                                                          std::vector<std::string>{"--cert", cert, "--key", key});
  }
  ~peer() {
    child_.reset();
    std::filesystem::remove_all(dir_);
  }
  connection_config connection() const {
    connection_config c;
    c.server = "https://127.0.0.1:" + std::to_string(port());
    c.ca_pem = ca_pem_;
    c.source = "test";
    return c;
  }
  int port() const { return child_->port(); }

private:
  std::filesystem::path dir_;
  std::string ca_pem_;
  std::unique_ptr<api::testing::python_peer> child_;
};

// The owner's context: closures queued from any thread, run by the test thread in order.
class queue_executor : public executor {
public:
  void post(std::function<void()> fn) override {
    std::lock_guard<std::mutex> l(m_);
    ready_.push_back(std::move(fn));
    cv_.notify_all();
  }
  void post_after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    std::lock_guard<std::mutex> l(m_);
    timers_.emplace(steady::now() + delay, std::move(fn));
    cv_.notify_all();
  }
  // Runs closures until pred() holds; false when the deadline passes first. `recheck` bounds how
  // long one wait lasts before pred is asked again (for predicates about the peer, not the queue).
  bool run_until(const std::function<bool()>& pred, std::chrono::milliseconds recheck = 1000ms,
                 std::chrono::seconds deadline = 30s) {
    auto end = steady::now() + deadline;
    while (!pred()) {
      if (steady::now() >= end) return false;
      if (auto fn = take(std::min(end, steady::now() + recheck))) fn();
    }
    return true;
  }
  size_t pending() {
    std::lock_guard<std::mutex> l(m_);
    return ready_.size() + timers_.size();
  }

private:
  // The next closure due, waiting for one until `until` at most; empty if none came.
  std::function<void()> take(steady::time_point until) {
    std::unique_lock<std::mutex> l(m_);
    auto due = [&] { return !ready_.empty() || (!timers_.empty() && timers_.begin()->first <= steady::now()); };
    while (!due() && steady::now() < until) {
      auto wake = timers_.empty() ? until : std::min(until, timers_.begin()->first);
      cv_.wait_until(l, wake);
    }
    if (ready_.empty() && !timers_.empty() && timers_.begin()->first <= steady::now()) {
      ready_.push_back(std::move(timers_.begin()->second));
      timers_.erase(timers_.begin());
    }
    if (ready_.empty()) return {};
    auto fn = std::move(ready_.front());
    ready_.pop_front();
    return fn;
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> ready_;
  std::multimap<steady::time_point, std::function<void()>> timers_;
};

// Runs one control request on the peer, synchronously.
std::string control(http_transport& t, const std::string& path) {
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  http_request r;
  r.method = path.rfind("/control/stats", 0) == 0 ? "GET" : "POST";
  r.path = path;
  r.timeout = 20s;
  t.start(r, http_callbacks{nullptr, nullptr, [done](http_response resp) { done->set_value(std::move(resp)); }});
  if (f.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no answer to " << path;
    return {};
  }
  auto resp = f.get();
  EXPECT_TRUE(resp.ok()) << path << ": " << resp.status << " " << resp.error;
  return resp.body;
}

// A delta as text: "added default/a n1 uid-1", "synced".
std::string describe(const delta& d) {
  static const char* names[] = {"added", "modified", "deleted", "synced"};
  std::string out = names[static_cast<int>(d.type)];
  if (!d.object) return out;
  const auto& pod = static_cast<const k8s::core::Pod&>(*d.object);
  out += " " + pod.metadata().namespace_() + "/" + pod.metadata().name() + " " + pod.spec().node_name() + " " +
         pod.metadata().uid();
  if (d.old) out += " (was " + static_cast<const k8s::core::Pod&>(*d.old).spec().node_name() + ")";
  return out;
}

// One reflector over the peer's pods, with its deltas and error lines recorded.
struct harness {
  explicit harness(encoding enc, uint32_t page_size = 500) {
    auto t = http_transport::create(p.connection());
    if (!t) throw std::runtime_error(t.err().message);
    transport = std::move(*t);
    opts.enc = enc;
    opts.page_size = page_size;
    opts.backoff_initial = 20ms;
    opts.backoff_max = 200ms;
    opts.absent_recheck = 30ms;
    opts.on_notice = [this](const std::string& line) { notices.push_back(line); };
  }
  void make(bool optional = false) {
    resource_ref ref;
    ref.optional = optional;
    ref.path = "/api/v1/pods";
    ref.kind = "Pod";
    ref.item_prototype = &k8s::core::Pod::default_instance();
    ref.list_prototype = &k8s::core::PodList::default_instance();
    ref.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
    r = std::make_unique<reflector>(
        *transport, ref, opts, ex,
        [this](std::vector<delta> batch) {
          batches.push_back(batch.size());
          for (auto& d : batch) deltas.push_back(describe(d));
          if (on_batch) on_batch();
        },
        [this](const std::string& line) { errors.push_back(line); });
  }
  std::vector<std::string> notices;
  std::string ctl(const std::string& path) { return control(*transport, path); }
  bool wait_deltas(size_t n) { return ex.run_until([&] { return deltas.size() >= n; }); }
  bool wait(const std::function<bool()>& pred) { return ex.run_until(pred, 20ms); }
  void start_synced(const std::vector<std::string>& names) {
    for (const auto& n : names) ctl("/control/put?name=" + n + "&node=n1");
    make();
    r->start();
    ASSERT_TRUE(wait_deltas(names.size() + 1));
    ASSERT_TRUE(r->synced());
    deltas.clear();
    batches.clear();
  }
  std::string all_errors() const {
    std::string out;
    for (const auto& e : errors) out += e + "\n";
    return out;
  }

  peer p;
  std::unique_ptr<http_transport> transport;
  queue_executor ex;
  reflector_options opts;
  std::unique_ptr<reflector> r;
  std::vector<std::string> deltas;
  std::vector<size_t> batches;
  std::vector<std::string> errors;
  std::function<void()> on_batch;
};

class ReflectorWire : public ::testing::TestWithParam<encoding> {};

std::string enc_name(const ::testing::TestParamInfo<encoding>& i) {
  return i.param == encoding::protobuf ? "protobuf" : "json";
}

TEST_P(ReflectorWire, PagedListThenSyncedThenWatch) {
  harness h(GetParam(), 2);
  for (const char* n : {"a", "b", "c", "d", "e"}) h.ctl(std::string("/control/put?name=") + n + "&node=n1");
  h.make();
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(6)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/a n1 uid-1", "added default/b n1 uid-2",
                                                "added default/c n1 uid-3", "added default/d n1 uid-4",
                                                "added default/e n1 uid-5", "synced"}));
  // One batch per page; the synced mark ends the last one.
  EXPECT_EQ(h.batches, (std::vector<size_t>{2, 2, 2}));
  EXPECT_TRUE(h.r->synced());
  EXPECT_EQ(h.r->resource_version(), "105");
  EXPECT_EQ(h.r->stats().lists, 1u);
  EXPECT_EQ(h.r->stats().pages, 3u);
  EXPECT_EQ(h.r->known_objects(), 5u);
  ASSERT_TRUE(h.wait([&] { return h.r->stats().watches == 1; }));
  // The reflector counts the watch when it starts the request; wait until the peer has it too.
  auto stats = h.ctl("/control/await_watches?n=1");
  EXPECT_NE(stats.find("limit=2&continue="), std::string::npos) << stats;
  EXPECT_NE(stats.find("fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"), std::string::npos)
      << stats;
  EXPECT_NE(stats.find("watch=1&resourceVersion=105&allowWatchBookmarks=true&timeoutSeconds=300"), std::string::npos)
      << stats;
  EXPECT_NE(stats.find(GetParam() == encoding::protobuf
                           ? "\"lastAccept\": \"application/vnd.kubernetes.protobuf, application/json\""
                           : "\"lastAccept\": \"application/json\""),
            std::string::npos)
      << stats;
  EXPECT_TRUE(h.errors.empty()) << h.all_errors();
}

TEST_P(ReflectorWire, UnpaginatedListIsOneBatch) {
  harness h(GetParam(), 0);
  for (const char* n : {"a", "b", "c"}) h.ctl(std::string("/control/put?name=") + n + "&node=n1");
  h.make();
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(4)) << h.all_errors();
  EXPECT_EQ(h.batches, (std::vector<size_t>{4}));
  EXPECT_EQ(h.deltas.back(), "synced");
  EXPECT_NE(h.ctl("/control/stats").find("\"lastList\": \"/api/v1/pods?fieldSelector="), std::string::npos);
}

TEST_P(ReflectorWire, WatchAddModifyDelete) {
  harness h(GetParam());
  h.start_synced({"a", "b"});
  h.ctl("/control/put?name=c&node=n2");
  h.ctl("/control/put?name=a&node=n3");
  h.ctl("/control/delete?name=b");
  ASSERT_TRUE(h.wait_deltas(3)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/c n2 uid-3", "modified default/a n3 uid-1 (was n1)",
                                                "deleted default/b n1 uid-2 (was n1)"}));
  EXPECT_EQ(h.r->resource_version(), "105");
  EXPECT_EQ(h.r->stats().watch_events, 3u);
  EXPECT_EQ(h.r->known_objects(), 2u);
  EXPECT_TRUE(h.errors.empty()) << h.all_errors();
}

TEST_P(ReflectorWire, BookmarkOnlyAdvancesTheResourceVersion) {
  harness h(GetParam());
  h.start_synced({"a"});
  ASSERT_TRUE(h.wait([&] { return h.ctl("/control/stats").find("\"openWatches\": 1") != std::string::npos; }));
  h.ctl("/control/bookmark");
  ASSERT_TRUE(h.wait([&] { return h.r->stats().bookmarks == 1; })) << h.all_errors();
  EXPECT_EQ(h.r->resource_version(), "102");
  EXPECT_TRUE(h.deltas.empty());
  // The watch goes on from there.
  h.ctl("/control/put?name=b&node=n1");
  ASSERT_TRUE(h.wait_deltas(1));
  EXPECT_EQ(h.deltas[0], "added default/b n1 uid-2");
  EXPECT_EQ(h.r->resource_version(), "103");
}

TEST_P(ReflectorWire, GoneRelistReconcilesWhatChangedMeanwhile) {
  harness h(GetParam());
  h.start_synced({"a", "b", "c"});
  // Changes the reflector's watch never hears of; then the log is compacted past its RV.
  h.ctl("/control/put?name=a&node=n9&quiet=1");
  h.ctl("/control/delete?name=b&quiet=1");
  h.ctl("/control/put?name=d&node=n1&quiet=1");
  h.ctl("/control/recreate?name=c&node=n7&quiet=1");
  h.ctl("/control/compact");
  ASSERT_TRUE(h.wait_deltas(5)) << h.all_errors();
  // A marker event afterwards: nothing else may arrive before it.
  h.ctl("/control/put?name=e&node=n1");
  ASSERT_TRUE(h.wait_deltas(6)) << h.all_errors();
  std::vector<std::string> got(h.deltas.begin(), h.deltas.end() - 1);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"added default/c n7 uid-5", "added default/d n1 uid-4",
                                           "deleted default/b n1 uid-2 (was n1)", "deleted default/c n1 uid-3 (was n1)",
                                           "modified default/a n9 uid-1 (was n1)"}));
  EXPECT_EQ(h.deltas.back(), "added default/e n1 uid-6");
  EXPECT_EQ(h.r->stats().gone, 1u);
  EXPECT_EQ(h.r->stats().relists, 1u);
  EXPECT_EQ(h.r->known_objects(), 4u);
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("Pod reflector: watch from resourceVersion 103"), std::string::npos) << h.errors[0];
  EXPECT_NE(h.errors[0].find("410 Expired"), std::string::npos) << h.errors[0];
}

TEST_P(ReflectorWire, HttpGoneOnWatchRelistsWithoutDuplicates) {
  harness h(GetParam());
  h.start_synced({"a", "b"});
  // Synced means listed; the first watch may not have reached the peer yet. Were it to arrive
  // after the 410 is armed, it would get the 410 itself and only two watches would ever be made.
  h.ctl("/control/await_watches?n=1");
  h.ctl("/control/gone?mode=http");
  h.ctl("/control/close");
  ASSERT_TRUE(h.wait([&] { return h.r->stats().relists == 1 && h.r->stats().watches == 3; })) << h.all_errors();
  h.ctl("/control/put?name=c&node=n1");
  ASSERT_TRUE(h.wait_deltas(1));
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/c n1 uid-3"}));
  EXPECT_EQ(h.r->stats().gone, 1u);
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("(410 Gone)"), std::string::npos) << h.errors[0];
}

TEST_P(ReflectorWire, ExpiredContinueTokenRestartsTheList) {
  harness h(GetParam(), 1);
  for (const char* n : {"a", "b", "c"}) h.ctl(std::string("/control/put?name=") + n + "&node=n1");
  h.make();
  // After the first page: every token issued so far expires.
  h.on_batch = [&] {
    if (h.batches.size() == 1) h.ctl("/control/expire");
  };
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(4)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/a n1 uid-1", "added default/b n1 uid-2",
                                                "added default/c n1 uid-3", "synced"}));
  EXPECT_EQ(h.r->stats().gone, 1u);
  EXPECT_EQ(h.r->stats().lists, 2u);
  EXPECT_EQ(h.r->stats().pages, 4u);  // a; then a (unchanged, no delta), b, c
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("continue token expired"), std::string::npos) << h.errors[0];
}

TEST_P(ReflectorWire, ClosedStreamRewatchesFromTheLastVersion) {
  harness h(GetParam());
  h.start_synced({"a"});
  h.ctl("/control/put?name=b&node=n1");
  ASSERT_TRUE(h.wait_deltas(1));
  h.ctl("/control/close");
  h.ctl("/control/put?name=c&node=n1");
  h.ctl("/control/put?name=b&node=n2");
  ASSERT_TRUE(h.wait_deltas(3)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/b n1 uid-2", "added default/c n1 uid-3",
                                                "modified default/b n2 uid-2 (was n1)"}));
  EXPECT_GE(h.r->stats().watches, 2u);
  EXPECT_EQ(h.r->stats().relists, 0u);
  EXPECT_NE(h.ctl("/control/stats").find("resourceVersion=102"), std::string::npos);
}

TEST_P(ReflectorWire, ResentEventsAreDroppedAndErrorEventsRewatch) {
  harness h(GetParam());
  h.start_synced({"a"});
  h.ctl("/control/put?name=b&node=n1");
  h.ctl("/control/put?name=a&node=n2");
  h.ctl("/control/delete?name=b");
  ASSERT_TRUE(h.wait_deltas(3));
  // The next watch resends the DELETED it was already given: nothing to deliver twice.
  h.ctl("/control/dup");
  h.ctl("/control/close");
  ASSERT_TRUE(h.wait([&] { return h.r->stats().watches == 2 && h.r->stats().watch_events == 4; })) << h.all_errors();
  // An ERROR event that is not 410: logged, the watch is made again after a backoff (no relist).
  h.ctl("/control/gone?mode=error");
  h.ctl("/control/close");
  ASSERT_TRUE(h.wait([&] { return h.r->stats().watches == 4; })) << h.all_errors();
  h.ctl("/control/put?name=a&node=n3");
  ASSERT_TRUE(h.wait_deltas(4));
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/b n1 uid-2", "modified default/a n2 uid-1 (was n1)",
                                                "deleted default/b n1 uid-2 (was n1)",
                                                "modified default/a n3 uid-1 (was n2)"}));
  EXPECT_EQ(h.r->stats().relists, 0u);
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("Pod reflector: watch: ERROR event: etcd is sulking (500 InternalError)"),
            std::string::npos)
      << h.errors[0];
}

TEST_P(ReflectorWire, ErrorsBackOffAndRetry) {
  harness h(GetParam());
  h.ctl("/control/put?name=a&node=n1");
  h.ctl("/control/fail?what=list&n=2&code=500");
  h.make();
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(2)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/a n1 uid-1", "synced"}));
  ASSERT_EQ(h.errors.size(), 2u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("Pod reflector: list: GET /api/v1/pods?limit=500"), std::string::npos) << h.errors[0];
  EXPECT_NE(h.errors[0].find("failing as asked (500 InternalError)"), std::string::npos) << h.errors[0];
  EXPECT_EQ(h.r->stats().lists, 3u);
  // A failing watch is retried after a backoff, as a watch (no relist).
  h.ctl("/control/fail?what=watch&n=1&code=503");
  h.ctl("/control/close");
  ASSERT_TRUE(h.wait([&] { return h.errors.size() == 3 && h.r->stats().watches >= 3; }));
  EXPECT_NE(h.errors[2].find("(503 InternalError)"), std::string::npos) << h.errors[2];
  h.ctl("/control/put?name=b&node=n1");
  ASSERT_TRUE(h.wait_deltas(3));
  EXPECT_EQ(h.deltas.back(), "added default/b n1 uid-2");
  EXPECT_EQ(h.r->stats().relists, 2u);  // the two list retries only
}

// An optional resource (an API the cluster may not serve, such as a CRD): a 404 on the list is an
// empty, synced collection, said once as a notice and never as an error; it is listed again until
// it is served, and then reflected as any other.
TEST_P(ReflectorWire, OptionalResourceNotServedIsEmptyAndSynced) {
  harness h(GetParam());
  h.ctl("/control/put?name=a&node=n1");
  h.ctl("/control/fail?what=list&n=3&code=404");
  h.make(true);
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(1)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"synced"}));
  EXPECT_TRUE(h.r->synced());
  ASSERT_EQ(h.notices.size(), 1u);
  EXPECT_NE(h.notices[0].find("Pod reflector: GET /api/v1/pods?limit=500"), std::string::npos) << h.notices[0];
  EXPECT_NE(h.notices[0].find("404: the API is not served here; Pod is treated as empty (listed again every 30 ms)"),
            std::string::npos)
      << h.notices[0];
  // Listed again until served: one notice for the three 404s, one when it is served.
  ASSERT_TRUE(h.wait_deltas(2)) << h.all_errors();
  EXPECT_EQ(h.deltas.back(), "added default/a n1 uid-1");
  EXPECT_EQ(h.r->stats().lists, 4u);
  ASSERT_EQ(h.notices.size(), 2u);
  EXPECT_NE(h.notices[1].find("the API is served now"), std::string::npos) << h.notices[1];
  EXPECT_TRUE(h.errors.empty()) << h.all_errors();
  ASSERT_TRUE(h.wait([&] { return h.r->stats().watches == 1; }));
  h.ctl("/control/put?name=b&node=n1");
  ASSERT_TRUE(h.wait_deltas(3));
  EXPECT_EQ(h.deltas.back(), "added default/b n1 uid-2");
}

// A required resource's 404 stays an error, retried with backoff.
TEST_P(ReflectorWire, RequiredResourceNotServedIsAnError) {
  harness h(GetParam());
  h.ctl("/control/fail?what=list&n=1&code=404");
  h.make();
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(1)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"synced"}));
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("Pod reflector: list: GET /api/v1/pods?limit=500"), std::string::npos) << h.errors[0];
  EXPECT_TRUE(h.notices.empty());
}

TEST_P(ReflectorWire, UndecodableBodiesAreErrorsAndRecover) {
  harness h(GetParam());
  h.ctl("/control/put?name=a&node=n1");
  h.ctl("/control/garbage?what=list");
  h.make();
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(2)) << h.all_errors();
  ASSERT_EQ(h.errors.size(), 1u) << h.all_errors();
  EXPECT_NE(h.errors[0].find("Pod reflector: list: "), std::string::npos) << h.errors[0];
  EXPECT_NE(h.errors[0].find("PodList"), std::string::npos) << h.errors[0];
  // A watch stream that cannot be read: error, relist after backoff, then the watch works again.
  h.ctl("/control/garbage?what=watch");
  h.ctl("/control/close");
  ASSERT_TRUE(h.wait([&] { return h.r->stats().relists == 2; })) << h.all_errors();
  ASSERT_EQ(h.errors.size(), 2u) << h.all_errors();
  EXPECT_NE(h.errors[1].find("Pod reflector: watch: "), std::string::npos) << h.errors[1];
  EXPECT_NE(h.errors[1].find("event 1"), std::string::npos) << h.errors[1];
  h.ctl("/control/put?name=b&node=n1");
  ASSERT_TRUE(h.wait_deltas(3));
  EXPECT_EQ(h.deltas.back(), "added default/b n1 uid-2");
}

TEST_P(ReflectorWire, StopAndDestroyWithRequestsInFlight) {
  harness h(GetParam());
  h.start_synced({"a"});
  // Stop with the watch open: nothing more arrives, the stream ends at the server.
  h.r->stop();
  h.ctl("/control/put?name=b&node=n1");
  h.ex.run_until([&] { return h.ex.pending() == 0; });
  EXPECT_TRUE(h.deltas.empty());
  // Start again: a relist reconciles, then the watch resumes.
  h.r->start();
  ASSERT_TRUE(h.wait_deltas(1)) << h.all_errors();
  EXPECT_EQ(h.deltas, (std::vector<std::string>{"added default/b n1 uid-2"}));
  // Destroyed with a list in flight (the peer holds it unanswered): the cancelled request's
  // completion must touch nothing.
  h.ctl("/control/hold");
  h.r->stop();
  h.r->start();
  ASSERT_TRUE(h.wait([&] { return h.ctl("/control/stats").find("\"lists\": 3") != std::string::npos; }));
  h.r.reset();
  h.ctl("/control/release");
  h.transport.reset();  // joins the I/O thread: every callback has run
  h.ex.run_until([&] { return h.ex.pending() == 0; });
  EXPECT_EQ(h.deltas.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Reflector, ReflectorWire, ::testing::Values(encoding::json, encoding::protobuf), enc_name);

}  // namespace
}  // namespace kas::api
