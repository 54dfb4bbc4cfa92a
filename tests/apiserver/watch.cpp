// Watch streams of the test apiserver fixture (server.hpp). A watch is an h2o generator living in
// its request's memory pool: frames (shared between the watches that send the same bytes) are
// queued in `pending_` and handed to h2o one batch of buffers at a time;
// the next batch goes out from `proceed`, when h2o has written the previous one, so the loop never
// blocks on a slow reader. The store's listener fans every change out to the open watches
// synchronously, so a watch has seen every change up to the store's resourceVersion; bookmarks can
// therefore carry that resourceVersion.
#include <cstring>
#include <ctime>
#include <deque>
#include <new>

#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/server.hpp"

namespace kas::testapi {

class watch_stream;
namespace {
using frame_ptr = std::shared_ptr<const std::string>;
// The frames made for one change, shared by every watch that sends the same bytes: a change is
// encoded once per (view, format, event type), not once per watcher.
struct frame_cache {
  struct entry {
    const kind_info* view;
    wire_format fmt;
    const char* type;
    frame_ptr frame;
  };
  std::vector<entry> entries;
};
void on_change_for(watch_stream* w, const change& c, frame_cache* cache);
}

class watch_stream {
public:
  h2o_generator_t super{};  // first member: h2o hands back a pointer to it
  h2o_req_t* req = nullptr;
  server* srv = nullptr;
  const kind_info* kind = nullptr;
  std::string ns;
  label_selector labels;
  field_selector fields;
  wire_format fmt = wire_format::json;
  bool table = false, bookmarks = false;
  int64_t deadline = 0;
  size_t index = 0;  // slot in server::watches_
  uint64_t events = 0;

  void queue(std::string frame) { pending_.push_back(std::make_shared<const std::string>(std::move(frame))); }
  void queue(frame_ptr frame) { pending_.push_back(std::move(frame)); }
  // Ends the stream after what is queued.
  void close() { closing_ = true; }
  // Ends the stream without what is queued (its connection is gone: a restart).
  void abort() {
    pending_.clear();
    closing_ = true;
  }
  bool closing() const { return closing_; }
  void flush(bool force = false);
  void on_proceed() {
    sending_ = false;
    inflight_.clear();
    flush();
  }
  bool matches(const stored_object& o) const {
    if (kind->namespaced && !ns.empty() && o.ns != ns) return false;
    return labels.matches(o.labels) && fields.matches(o);
  }
  std::string frame(const char* type, const stored_object& o) const;

private:
  std::deque<frame_ptr> pending_;
  std::vector<frame_ptr> inflight_;  // what h2o is sending (kept alive until proceed)
  std::vector<h2o_iovec_t> vecs_;
  bool sending_ = false, closing_ = false, finished_ = false;
};

std::string watch_stream::frame(const char* type, const stored_object& o) const {
  if (!table) return watch_object_frame(type, o, fmt);
  std::vector<object_ptr> one;
  one.push_back(std::shared_ptr<const stored_object>(std::shared_ptr<const stored_object>(), &o));
  return watch_frame(type, srv->table_body(*kind, one, o.rv, ""), wire_format::json);
}

// `force` sends even an empty batch, so the response headers go out when a watch starts.
void watch_stream::flush(bool force) {
  if (sending_ || finished_) return;
  if (pending_.empty() && !closing_ && !force) return;
  inflight_.clear();
  vecs_.clear();
  while (!pending_.empty()) {
    inflight_.push_back(std::move(pending_.front()));
    pending_.pop_front();
    vecs_.push_back(h2o_iovec_init(inflight_.back()->data(), inflight_.back()->size()));
  }
  sending_ = true;
  if (closing_) {
    finished_ = true;
    srv->unregister(this);
    // May dispose the pool (and this): return at once.
    h2o_send(req, vecs_.data(), vecs_.size(), H2O_SEND_STATE_FINAL);
    return;
  }
  h2o_send(req, vecs_.data(), vecs_.size(), H2O_SEND_STATE_IN_PROGRESS);
}

namespace {

void on_proceed(h2o_generator_t* g, h2o_req_t*) { reinterpret_cast<watch_stream*>(g)->on_proceed(); }
void on_stop(h2o_generator_t* g, h2o_req_t*) {
  auto* w = reinterpret_cast<watch_stream*>(g);
  w->srv->unregister(w);
}

}  // namespace

void server::unregister(watch_stream* w) {
  if (w->index < watches_.size() && watches_[w->index] == w) watches_[w->index] = nullptr;
}

void server::abort_watches() {
  // By index: ending one watch may end others of its connection (their slots become null).
  for (size_t i = 0; i < watches_.size(); ++i) {
    watch_stream* w = watches_[i];
    if (!w) continue;
    w->abort();
    w->flush();  // a watch whose last batch is still being written ends from proceed
  }
}

void server::start_watch(request& r, const kind_info& k, const std::string& ns, wire_format f, bool table) {
  auto ls = label_selector::parse(r.param("labelSelector"));
  if (!ls) return respond_error(r.req, bad_request("unable to parse requirement: " + ls.err().message), f);
  auto fs = field_selector::parse(r.param("fieldSelector"), k);
  if (!fs) return respond_error(r.req, bad_request(fs.err().message), f);
  std::string rv_text = r.param("resourceVersion");
  uint64_t from = 0;
  if (!rv_text.empty()) {
    char* end = nullptr;
    from = std::strtoull(rv_text.c_str(), &end, 10);
    if (*end != '\0') return respond_error(r.req, bad_request("invalid resourceVersion \"" + rv_text + "\""), f);
  }
  std::vector<const change*> backlog;
  api_error too_old;
  bool expired_rv = false;
  if (from != 0) {
    auto ch = store_.changes_since(k, from);
    if (ch.ok()) backlog = std::move(*ch.value); else { too_old = ch.err; expired_rv = true; }
  }
  auto* w = static_cast<watch_stream*>(h2o_mem_alloc_shared(&r.req->pool, sizeof(watch_stream), [](void* p) {
    auto* w = static_cast<watch_stream*>(p);
    w->srv->unregister(w);
    w->~watch_stream();
  }));
  new (w) watch_stream();
  w->super.proceed = on_proceed;
  w->super.stop = on_stop;
  w->req = r.req;
  w->srv = this;
  w->kind = &k;
  w->ns = ns;
  w->labels = std::move(*ls);
  w->fields = std::move(*fs);
  w->fmt = table ? wire_format::json : f;
  w->table = table;
  w->bookmarks = r.param("allowWatchBookmarks") == "true" || r.param("allowWatchBookmarks") == "1";
  std::string timeout = r.param("timeoutSeconds");
  w->deadline = static_cast<int64_t>(std::time(nullptr)) + (timeout.empty() ? 1800 : std::atoll(timeout.c_str()));
  w->index = watches_.size();
  watches_.push_back(w);
  r.req->res.status = 200;
  r.req->res.reason = "OK";
  const char* ct = content_type(w->fmt, true);
  h2o_add_header(&r.req->pool, &r.req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, ct, strlen(ct));
  h2o_start_response(r.req, &w->super);
  if (expired_rv) {
    ++faults_.watch_expired;
    w->queue(watch_error_frame(too_old, w->fmt));
    w->close();
  } else if (from == 0) {
    for (const auto& o : store_.snapshot(k, ns))
      if (w->matches(*o)) w->queue(w->frame("ADDED", *o));
  } else {
    for (const change* c : backlog) on_change_for(w, *c, nullptr);
  }
  w->flush(true);
}

namespace {

// What a change looks like through this watch's selectors, as the watch cache shows it: an object
// that starts matching is ADDED, one that stops matching is DELETED.
void on_change_for(watch_stream* w, const change& c, frame_cache* cache) {
  if (w->closing()) return;
  // Changes are recorded in the storage's shape; a watch of a view (events.k8s.io) converts them.
  object_ptr obj = view_of(c.obj, *w->kind), prev = view_of(c.prev, *w->kind);
  bool now = c.type != change_type::deleted && w->matches(*obj);
  bool before = prev && w->matches(*prev);
  const char* type = nullptr;
  if (c.type == change_type::deleted) type = before ? "DELETED" : nullptr;
  else if (now) type = before ? "MODIFIED" : "ADDED";
  else if (before) type = "DELETED";
  if (!type) return;
  if (w->table || !cache) {
    w->queue(w->frame(type, *obj));
  } else {
    frame_ptr frame;
    for (const auto& e : cache->entries)
      if (e.view == w->kind && e.fmt == w->fmt && std::strcmp(e.type, type) == 0) frame = e.frame;
    if (!frame) {
      frame = std::make_shared<const std::string>(w->frame(type, *obj));
      cache->entries.push_back({w->kind, w->fmt, type, frame});
    }
    w->queue(std::move(frame));
  }
  ++w->events;
  uint64_t every = w->srv->options().faults.watch_close_every;
  if (every > 0 && w->events >= every) {
    ++w->srv->faults().watch_closed;
    w->close();
  }
}

}  // namespace

void server::on_change(const change& c) {
  iterating_ = true;
  frame_cache cache;
  for (size_t i = 0; i < watches_.size(); ++i) {
    watch_stream* w = watches_[i];
    if (!w || w->kind->storage != c.obj->kind) continue;
    on_change_for(w, c, &cache);
    w->flush();
  }
  iterating_ = false;
}

void server::tick() {
  ++ticks_;
  uint64_t restart_every = opts_.faults.restart_every_seconds;
  if (restart_every > 0 && ticks_ % restart_every == 0) restart();
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  uint64_t compact_every = opts_.faults.compact_every_seconds;
  bool compact = compact_every > 0 && ticks_ % compact_every == 0;
  if (compact) {
    ++faults_.compactions;
    store_.compact();
  }
  bool bookmark = opts_.bookmark_seconds > 0 && ticks_ % opts_.bookmark_seconds == 0;
  std::vector<watch_stream*> live;
  for (watch_stream* w : watches_)
    if (w) live.push_back(w);
  watches_.clear();
  for (watch_stream* w : live) {
    w->index = watches_.size();
    watches_.push_back(w);
  }
  for (watch_stream* w : live) {
    if (compact) {
      w->queue(watch_error_frame(expired("too old resource version: " + std::to_string(store_.current_rv()) +
                                         " (" + std::to_string(store_.current_rv()) + ")"), w->fmt));
      w->close();
    } else if (now >= w->deadline) {
      w->close();
    } else if (bookmark && w->bookmarks) {
      w->queue(watch_bookmark_frame(*w->kind, store_.current_rv(), w->fmt));
    }
    w->flush();
  }
}

}  // namespace kas::testapi
