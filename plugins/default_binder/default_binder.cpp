#include "plugins/default_binder/default_binder.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> default_binder::make(const YAML::Node&, const std::string&,
                                                         const fw::handle& h) {
  return std::shared_ptr<fw::plugin>(std::make_shared<default_binder>(h.client));
}

fw::status default_binder::bind(const fw::cycle_state&, const pod_info& pod, const std::string& node,
                                fw::bind_callback done) const {
  if (!client_) return fw::status::error("DefaultBinder: no cluster client to post the Binding");
  client_->bind(pod, node, std::move(done));
  return fw::status(fw::code::pending);
}

}  // namespace kas::plugins
