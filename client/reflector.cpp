#include "client/reflector.hpp"

#include "client/api_requests.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>

namespace kas::api {

namespace {

namespace pb = google::protobuf;
using steady = std::chrono::steady_clock;

// A message field's string by name, or "" when the message has no such singular string field.
std::string string_field(const pb::Message& m, const char* name) {
  const auto* f = m.GetDescriptor()->FindFieldByName(name);
  if (!f || f->is_repeated() || f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) return {};
  return m.GetReflection()->GetString(m, f);
}

// The `metadata` sub-message (ObjectMeta or ListMeta), or null.
const pb::Message* metadata_of(const pb::Message& m) {
  const auto* f = m.GetDescriptor()->FindFieldByName("metadata");
  if (!f || f->is_repeated() || f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return nullptr;
  return &m.GetReflection()->GetMessage(m, f);
}

struct object_meta {
  std::string key, uid, rv;
};

object_meta meta_of(const pb::Message& obj) {
  object_meta out;
  if (const auto* md = metadata_of(obj)) {
    auto ns = string_field(*md, "namespace");
    auto name = string_field(*md, "name");
    out.key = ns.empty() ? name : ns + "/" + name;
    out.uid = string_field(*md, "uid");
    out.rv = string_field(*md, "resource_version");
  }
  return out;
}

bool is_2xx(int status) { return status >= 200 && status < 300; }

bool is_gone(const api_status& s) { return s.code == 410 || s.reason == "Expired" || s.reason == "Gone"; }

}  // namespace

struct reflector::impl : std::enable_shared_from_this<reflector::impl> {
  // What the I/O thread posts through; closed (ex = null) by the reflector's destructor.
  struct gate {
    std::mutex m;
    executor* ex = nullptr;
  };
  // What a watch chunk asks of the reflector once its deltas are delivered.
  enum class next { go_on, relist_now, relist_later, rewatch_later };
  using action = void (impl::*)();

  impl(http_transport& t, resource_ref r, reflector_options o, executor& ex,
       std::function<void(std::vector<delta>)> sink, std::function<void(const std::string&)> on_error)
      : t_(t), r_(std::move(r)), o_(o), ex_(ex), gate_(std::make_shared<gate>()), sink_(std::move(sink)),
        on_error_(std::move(on_error)), rng_(std::random_device{}()) {
    gate_->ex = &ex;
  }

  void start();
  void stop();
  void close_gate() {
    std::lock_guard<std::mutex> l(gate_->m);
    gate_->ex = nullptr;
  }

  // Requests and scheduling.
  void launch(http_request req, bool stream);
  void cancel_in_flight();
  void schedule(std::chrono::milliseconds delay, action a);
  void retry(action a);
  void relist_after_gone();
  bool stale(uint64_t gen) const { return !running_ || gen != gen_; }
  bool deliver(std::vector<delta>& out);
  void report(const std::string& what);
  std::string query_selectors() const;
  std::string accept() const;

  // Listing.
  void relist() { begin_list({}); }
  void begin_list(const std::string& cont);
  void on_list_done(uint64_t gen, http_response r);
  void list_failed(const http_response& r);
  void list_absent();
  void take_items(pb::Message& list, std::vector<delta>& out);
  void remove_unseen(std::vector<delta>& out);

  // Watching.
  void begin_watch();
  void on_watch_headers(uint64_t gen, int status, const std::string& content_type);
  void on_watch_data(uint64_t gen, const std::string& chunk);
  void on_watch_done(uint64_t gen, http_response r);
  next apply_event(const watch_event& ev, std::vector<delta>& out);
  void follow(next n);

  // Known state.
  void upsert(object_ptr obj, std::vector<delta>& out);
  void remove(object_ptr obj, std::vector<delta>& out);

  http_transport& t_;
  resource_ref r_;
  reflector_options o_;
  executor& ex_;
  std::shared_ptr<gate> gate_;
  std::function<void(std::vector<delta>)> sink_;
  std::function<void(const std::string&)> on_error_;

  bool running_ = false, synced_ = false, listed_before_ = false;
  bool absent_ = false;  // resource_ref::optional: the last list answered 404
  std::string rv_;
  counters stats_;
  std::unordered_map<std::string, object_ptr> known_;

  uint64_t gen_ = 0;       // the current request's or scheduled retry's generation
  uint64_t request_ = 0;   // the transport's id for the request in flight
  bool in_flight_ = false;
  std::string req_path_;   // for error lines
  int failures_ = 0;       // consecutive failures without a healthy watch in between
  std::mt19937_64 rng_;

  // The list run in progress.
  std::string continue_;
  std::unordered_set<std::string> seen_;

  // The watch in progress.
  std::optional<watch_decoder> decoder_;
  encoding watch_enc_ = encoding::protobuf;
  int watch_status_ = 0;
  std::string watch_error_body_;  // the body of a non-2xx watch response (bounded)
  uint64_t stream_events_ = 0;
  int quick_empty_ends_ = 0;  // clean stream ends in a row that came at once, without events
  steady::time_point watch_started_;
};

// ---- requests and scheduling ----

void reflector::impl::launch(http_request req, bool stream) {
  uint64_t gen = ++gen_;
  std::weak_ptr<impl> w = weak_from_this();
  auto forward = [g = gate_](std::function<void()> fn) {
    std::lock_guard<std::mutex> l(g->m);
    if (g->ex) g->ex->post(std::move(fn));
  };
  http_callbacks cb;
  if (stream) {
    cb.on_headers = [forward, w, gen](int status, std::string_view ct) {
      forward([w, gen, status, ct = std::string(ct)] {
        if (auto s = w.lock()) s->on_watch_headers(gen, status, ct);
      });
    };
    cb.on_data = [forward, w, gen](std::string_view chunk) {
      forward([w, gen, chunk = std::string(chunk)] {
        if (auto s = w.lock()) s->on_watch_data(gen, chunk);
      });
    };
  }
  cb.on_done = [forward, w, gen, stream](http_response r) {
    forward([w, gen, stream, r = std::move(r)]() mutable {
      auto s = w.lock();
      if (!s) return;
      if (stream) s->on_watch_done(gen, std::move(r));
      else s->on_list_done(gen, std::move(r));
    });
  };
  req_path_ = req.path;
  in_flight_ = true;
  request_ = t_.start(std::move(req), std::move(cb));
}

void reflector::impl::cancel_in_flight() {
  ++gen_;  // whatever the cancelled request still reports is stale
  if (in_flight_) t_.cancel(request_);
  in_flight_ = false;
}

void reflector::impl::schedule(std::chrono::milliseconds delay, action a) {
  uint64_t gen = ++gen_;
  std::weak_ptr<impl> w = weak_from_this();
  ex_.post_after(delay, [w, gen, a] {
    auto s = w.lock();
    if (s && !s->stale(gen)) ((*s).*a)();
  });
}

void reflector::impl::retry(action a) {
  ++failures_;
  auto base = o_.backoff_initial;
  for (int i = 1; i < failures_ && base < o_.backoff_max; ++i) base *= 2;
  base = std::min(base, o_.backoff_max);
  // Half fixed, half random: retries of many reflectors spread out instead of arriving together.
  std::uniform_int_distribution<long long> jitter(0, std::max<long long>(0, base.count() / 2));
  schedule(std::chrono::milliseconds(base.count() - base.count() / 2 + jitter(rng_)), a);
}

void reflector::impl::relist_after_gone() {
  if (failures_ > 0) return retry(&impl::relist);
  failures_ = 1;
  relist();
}

bool reflector::impl::deliver(std::vector<delta>& out) {
  if (out.empty()) return true;
  uint64_t gen = gen_;
  sink_(std::move(out));
  out.clear();
  return !stale(gen);  // the sink may have stopped us
}

void reflector::impl::report(const std::string& what) {
  ++stats_.errors;
  if (on_error_) on_error_(r_.kind + " reflector: " + what);
}

std::string reflector::impl::query_selectors() const {
  std::string q;
  if (!r_.field_selector.empty()) q += "&fieldSelector=" + url_escape(r_.field_selector);
  if (!r_.label_selector.empty()) q += "&labelSelector=" + url_escape(r_.label_selector);
  return q;
}

// Protobuf with JSON as the fallback, as client-go asks: kinds without a protobuf form (custom
// resources) are then still served. Responses are decoded by their Content-Type.
std::string reflector::impl::accept() const {
  if (o_.enc == encoding::json) return std::string(media_type(encoding::json));
  return std::string(media_type(encoding::protobuf)) + ", " + std::string(media_type(encoding::json));
}

void reflector::impl::start() {
  if (running_) return;
  const pb::FieldDescriptor* items =
      r_.list_prototype ? r_.list_prototype->GetDescriptor()->FindFieldByName("items") : nullptr;
  if (!r_.item_prototype || !items || !items->is_repeated() || items->message_type() == nullptr ||
      items->message_type() != r_.item_prototype->GetDescriptor()) {
    report("list_prototype must have a repeated `items` field of item_prototype's type; not started");
    return;
  }
  running_ = true;
  failures_ = 0;
  relist();
}

void reflector::impl::stop() {
  cancel_in_flight();
  running_ = false;
}

// ---- listing ----

void reflector::impl::begin_list(const std::string& cont) {
  if (cont.empty()) {  // a new list run, from the first page
    ++stats_.lists;
    if (listed_before_) ++stats_.relists;
    listed_before_ = true;
    seen_.clear();
  }
  continue_ = cont;
  std::string query;
  if (o_.page_size > 0) query += "&limit=" + std::to_string(o_.page_size);
  if (!cont.empty()) query += "&continue=" + url_escape(cont);
  query += query_selectors();
  http_request req;
  req.path = r_.path;
  if (!query.empty()) req.path += (r_.path.find('?') == std::string::npos ? "?" : "&") + query.substr(1);
  req.accept = accept();
  req.timeout = o_.list_timeout;
  launch(std::move(req), false);
}

void reflector::impl::list_failed(const http_response& r) {
  if (r.status == 0) {
    report("list: " + r.error);
  } else {
    auto st = decode_status(r.status, r.body, encoding_of(r.content_type).value_or(o_.enc));
    if (r.status == 410 && !continue_.empty()) {
      ++stats_.gone;
      report("list: GET " + req_path_ + ": continue token expired: " + to_string(st) + "; listing from the start");
      return relist_after_gone();
    }
    if (r.status == 404 && r_.optional && continue_.empty()) return list_absent();
    report("list: GET " + req_path_ + ": " + to_string(st));
  }
  retry(&impl::relist);
}

// An optional resource the server does not serve: an empty list, then a periodic look again.
void reflector::impl::list_absent() {
  if (!absent_) {
    absent_ = true;
    if (o_.on_notice)
      o_.on_notice(r_.kind + " reflector: GET " + req_path_ + ": 404: the API is not served here; " + r_.kind +
                   " is treated as empty (listed again every " + std::to_string(o_.absent_recheck.count()) + " ms)");
  }
  failures_ = 0;
  std::vector<delta> out;
  rv_.clear();
  remove_unseen(out);  // the list run began with nothing seen: whatever was known is gone
  if (!synced_) {
    synced_ = true;
    out.push_back(delta{delta_type::synced, nullptr, nullptr});
  }
  if (deliver(out)) schedule(o_.absent_recheck, &impl::relist);
}

void reflector::impl::on_list_done(uint64_t gen, http_response r) {
  if (stale(gen)) return;
  in_flight_ = false;
  if (!r.ok()) return list_failed(r);
  auto enc = encoding_of(r.content_type).value_or(o_.enc);
  std::unique_ptr<pb::Message> list(r_.list_prototype->New());
  if (auto d = decode_body(r.body, enc, *list); !d) {
    report("list: GET " + req_path_ + ": " + d.err().message);
    return retry(&impl::relist);
  }
  r.body = std::string();  // one copy of the page at a time
  ++stats_.pages;
  if (absent_) {
    absent_ = false;
    if (o_.on_notice) o_.on_notice(r_.kind + " reflector: GET " + req_path_ + ": the API is served now");
  }
  std::string rv, cont;
  if (const auto* lm = metadata_of(*list)) {
    rv = string_field(*lm, "resource_version");
    cont = string_field(*lm, "continue");
  }
  std::vector<delta> out;
  take_items(*list, out);
  list.reset();
  if (!cont.empty()) {
    if (deliver(out)) begin_list(cont);
    return;
  }
  rv_ = rv;
  remove_unseen(out);
  if (!synced_) {
    synced_ = true;
    out.push_back(delta{delta_type::synced, nullptr, nullptr});
  }
  if (deliver(out)) begin_watch();
}

void reflector::impl::take_items(pb::Message& list, std::vector<delta>& out) {
  const auto* f = list.GetDescriptor()->FindFieldByName("items");
  const auto* refl = list.GetReflection();
  int n = refl->FieldSize(list, f);
  // Released, not copied: the page's items become the delivered objects.
  std::vector<std::unique_ptr<pb::Message>> items(static_cast<size_t>(n));
  for (int i = n - 1; i >= 0; --i) items[static_cast<size_t>(i)].reset(refl->ReleaseLast(&list, f));
  out.reserve(out.size() + items.size());
  for (auto& item : items) {
    seen_.insert(meta_of(*item).key);
    upsert(object_ptr(std::move(item)), out);
  }
}

void reflector::impl::remove_unseen(std::vector<delta>& out) {
  for (auto it = known_.begin(); it != known_.end();) {
    if (seen_.count(it->first)) {
      ++it;
      continue;
    }
    out.push_back(delta{delta_type::deleted, it->second, it->second});
    it = known_.erase(it);
  }
  seen_.clear();
}

// ---- known state ----

void reflector::impl::upsert(object_ptr obj, std::vector<delta>& out) {
  auto m = meta_of(*obj);
  auto it = known_.find(m.key);
  if (it == known_.end()) {
    known_.emplace(m.key, obj);
    out.push_back(delta{delta_type::added, std::move(obj), nullptr});
    return;
  }
  auto before = meta_of(*it->second);
  if (before.uid != m.uid) {  // deleted and created again under the same name
    out.push_back(delta{delta_type::deleted, it->second, it->second});
    out.push_back(delta{delta_type::added, obj, nullptr});
    it->second = std::move(obj);
    return;
  }
  if (before.rv == m.rv) return;  // unchanged (relist) or a duplicate event (watch)
  out.push_back(delta{delta_type::modified, obj, it->second});
  it->second = std::move(obj);
}

void reflector::impl::remove(object_ptr obj, std::vector<delta>& out) {
  auto it = known_.find(meta_of(*obj).key);
  if (it == known_.end()) return;  // never delivered (or already gone): nothing to delete
  out.push_back(delta{delta_type::deleted, std::move(obj), it->second});
  known_.erase(it);
}

// ---- watching ----

void reflector::impl::begin_watch() {
  ++stats_.watches;
  watch_enc_ = o_.enc;
  decoder_.emplace(watch_enc_);
  watch_status_ = 0;
  watch_error_body_.clear();
  stream_events_ = 0;
  watch_started_ = steady::now();
  std::string path = r_.path + (r_.path.find('?') == std::string::npos ? "?" : "&");
  path += "watch=1";
  if (!rv_.empty()) path += "&resourceVersion=" + url_escape(rv_);
  if (o_.bookmarks) path += "&allowWatchBookmarks=true";
  path += "&timeoutSeconds=" + std::to_string(o_.watch_timeout.count());
  path += query_selectors();
  http_request req;
  req.path = std::move(path);
  req.accept = accept();
  req.stream = true;
  // The server ends the watch after timeoutSeconds; this only guards against a connection gone silent.
  req.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(o_.watch_timeout) + std::chrono::seconds(30);
  launch(std::move(req), true);
}

void reflector::impl::on_watch_headers(uint64_t gen, int status, const std::string& content_type) {
  if (stale(gen)) return;
  watch_status_ = status;
  if (auto e = encoding_of(content_type); e && is_2xx(status) && *e != watch_enc_) {
    watch_enc_ = *e;  // the server chose the other encoding (it may, when it cannot serve ours)
    decoder_.emplace(watch_enc_);
  }
}

void reflector::impl::on_watch_data(uint64_t gen, const std::string& chunk) {
  if (stale(gen)) return;
  if (!is_2xx(watch_status_)) {  // an error body: keep its start for the error line
    watch_error_body_.append(chunk, 0, std::min(chunk.size(), size_t{65536} - std::min(size_t{65536}, watch_error_body_.size())));
    return;
  }
  std::vector<watch_event> events;
  auto fed = decoder_->feed(chunk, events);
  std::vector<delta> out;
  next n = next::go_on;
  for (const auto& ev : events) {
    n = apply_event(ev, out);
    if (n != next::go_on) break;
  }
  if (n == next::go_on && !fed) {
    report("watch: GET " + req_path_ + ": " + fed.err().message);
    n = next::relist_later;
  }
  if (!deliver(out)) return;
  follow(n);
}

void reflector::impl::follow(next n) {
  if (n == next::go_on) return;
  cancel_in_flight();
  if (n == next::relist_now) relist_after_gone();
  else if (n == next::relist_later) retry(&impl::relist);
  else retry(&impl::begin_watch);
}

reflector::impl::next reflector::impl::apply_event(const watch_event& ev, std::vector<delta>& out) {
  if (ev.type == watch_event_type::error) {
    auto st = decode_status(0, ev.object, watch_enc_);
    if (is_gone(st)) {
      ++stats_.gone;
      report("watch from resourceVersion " + rv_ + ": " + to_string(st) + "; relisting");
      return next::relist_now;
    }
    report("watch: ERROR event: " + to_string(st));
    return next::rewatch_later;
  }
  std::shared_ptr<pb::Message> obj(r_.item_prototype->New());
  if (auto d = decode_body(ev.object, watch_enc_, *obj); !d) {
    report("watch: " + std::string(to_string(ev.type)) + " event " + std::to_string(decoder_->events()) + ": " +
           d.err().message);
    return next::relist_later;
  }
  ++stream_events_;
  failures_ = 0;  // a healthy watch
  quick_empty_ends_ = 0;
  auto m = meta_of(*obj);
  if (ev.type == watch_event_type::bookmark) {
    ++stats_.bookmarks;
  } else {
    ++stats_.watch_events;
    if (ev.type == watch_event_type::deleted) remove(std::move(obj), out);
    else upsert(std::move(obj), out);
  }
  if (!m.rv.empty()) rv_ = m.rv;
  return next::go_on;
}

void reflector::impl::on_watch_done(uint64_t gen, http_response r) {
  if (stale(gen)) return;
  in_flight_ = false;
  int status = r.status != 0 ? r.status : watch_status_;
  if (status != 0 && !is_2xx(status)) {
    auto st = decode_status(status, r.body.empty() ? watch_error_body_ : r.body, watch_enc_);
    if (status == 410 || is_gone(st)) {
      ++stats_.gone;
      report("watch: GET " + req_path_ + ": " + to_string(st) + "; relisting");
      return relist_after_gone();
    }
    report("watch: GET " + req_path_ + ": " + to_string(st));
    // An optional API that went away (its CRD deleted): the relist finds it absent.
    if (status == 404 && r_.optional) return retry(&impl::relist);
    return retry(&impl::begin_watch);
  }
  if (!r.error.empty()) {
    report("watch: " + r.error);
    return retry(&impl::begin_watch);
  }
  if (auto f = decoder_->finish(); !f) {
    report("watch: GET " + req_path_ + ": " + f.err().message);
    return retry(&impl::relist);
  }
  // A stream that ends cleanly is the server's timeout (or a proxy's): watch again from where we
  // are. Streams that keep ending at once without a word would spin, so the second in a row backs off.
  bool empty_and_short = stream_events_ == 0 && steady::now() - watch_started_ < std::chrono::seconds(1);
  quick_empty_ends_ = empty_and_short ? quick_empty_ends_ + 1 : 0;
  if (quick_empty_ends_ >= 2) {
    report("watch: GET " + req_path_ + ": the server keeps ending the stream at once");
    return retry(&impl::begin_watch);
  }
  if (!empty_and_short) failures_ = 0;
  begin_watch();
}

// ---- the public face ----

reflector::reflector(http_transport& t, resource_ref r, reflector_options o, executor& ex,
                     std::function<void(std::vector<delta>)> sink, std::function<void(const std::string&)> on_error)
    : p_(std::make_shared<impl>(t, std::move(r), o, ex, std::move(sink), std::move(on_error))) {}

reflector::~reflector() {
  p_->stop();
  p_->close_gate();
}

void reflector::start() { p_->start(); }
void reflector::stop() { p_->stop(); }
bool reflector::synced() const { return p_->synced_; }
const std::string& reflector::resource_version() const { return p_->rv_; }
const reflector::counters& reflector::stats() const { return p_->stats_; }
size_t reflector::known_objects() const { return p_->known_.size(); }

}  // namespace kas::api
