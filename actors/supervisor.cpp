#include "actors/supervisor.hpp"

#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

namespace kas {

// --- supervision_state ----------------------------------------------------------------------------

void supervision_state::watch(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(watched_.begin(), watched_.end(), name) == watched_.end()) watched_.push_back(name);
}

void supervision_state::begin_stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
}

bool supervision_state::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool supervision_state::on_terminated(const std::string& name, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  failures_.push_back({name, reason});
  return true;
}

std::vector<actor_failure> supervision_state::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

std::optional<actor_failure> supervision_state::first_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (failures_.empty()) return std::nullopt;
  return failures_.front();
}

std::vector<obs::health_check> supervision_state::checks() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<obs::health_check> out;
  out.push_back({"ping", true, {}});
  for (auto& name : watched_) {
    obs::health_check c{"actor/" + name, true, {}};
    for (auto& f : failures_)
      if (f.actor == name) {
        c.ok = false;
        c.reason = f.reason;
        break;
      }
    out.push_back(std::move(c));
  }
  return out;
}

// --- the actor ------------------------------------------------------------------------------------

std::string describe_exit_reason(const caf::error& reason) {
  if (!reason) return "normal";
  return to_string(reason);
}

namespace {

struct supervisor_actor_state {
  std::shared_ptr<supervision_state> health;
  std::map<caf::actor_addr, std::string> names;  // watched actors by address
  std::vector<caf::actor_addr> subscribers;
  static inline const char* name = "supervisor";
};

using self_ptr = supervisor_actor::stateful_pointer<supervisor_actor_state>;

// Quotes a log field value the way logging's key="value" parser reads it.
std::string log_quoted(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void notify(const caf::actor_addr& to, const actor_failure& f) {
  if (auto a = caf::actor_cast<caf::actor>(to)) caf::anon_send(a, died_atom::value, f.actor, f.reason);
}

}  // namespace

supervisor_actor spawn_supervisor(caf::actor_system& sys, std::shared_ptr<supervision_state> state) {
  return sys.spawn([state](self_ptr self) -> supervisor_actor::behavior_type {
    self->state.health = state;
    self->set_down_handler([self](caf::down_msg& dm) {
      auto& st = self->state;
      auto it = st.names.find(dm.source);
      if (it == st.names.end()) return;
      std::string name = std::move(it->second);
      st.names.erase(it);
      std::string reason = describe_exit_reason(dm.reason);
      if (!st.health->on_terminated(name, reason)) {
        spdlog::debug("Actor stopped actor=\"{}\" reason=\"{}\"", name, log_quoted(reason));
        return;
      }
      spdlog::error("Actor died actor=\"{}\" reason=\"{}\"", name, log_quoted(reason));
      // Subscribers hear about the first failure only: later deaths usually follow from it (a peer's
      // request to the dead actor fails), and the first one is the cause to report.
      if (st.health->failures().size() != 1) return;
      actor_failure f{name, reason};
      for (auto& s : st.subscribers) notify(s, f);
    });
    return {
      [self](supervise_atom, const caf::actor& a, const std::string& name) {
        if (!a) return;
        self->state.health->watch(name);
        self->state.names[a.address()] = name;
        self->monitor(a);
      },
      [self](watch_atom) {
        auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
        if (!sender) return;
        self->state.subscribers.push_back(sender);
        if (auto f = self->state.health->first_failure()) notify(sender, *f);
      },
    };
  });
}

}  // namespace kas
