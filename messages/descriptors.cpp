#include "messages/descriptors.hpp"

#include "messages/k8s/apps.pb.h"
#include "messages/k8s/coordination.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/events.pb.h"
#include "messages/k8s/meta.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas::codec {

void build_all_descriptors() {
  // One message per generated file: descriptor() assigns that file's whole table (every message
  // of the file), and its imports are built into the pool on the way.
  const google::protobuf::Descriptor* files[] = {
    k8s::meta::ObjectMeta::descriptor(),         k8s::core::Pod::descriptor(),
    k8s::apps::ReplicaSet::descriptor(),         k8s::coordination::Lease::descriptor(),
    k8s::scheduling::PriorityClass::descriptor(), k8s::policy::PodDisruptionBudget::descriptor(),
    k8s::events::Event::descriptor(),            k8s::storage::StorageClass::descriptor(),
    k8s::coscheduling::PodGroup::descriptor(),
  };
  // The generated factory is what reflection hands sub-messages out of; touching it here builds it
  // on this thread too.
  for (const auto* d : files) google::protobuf::MessageFactory::generated_factory()->GetPrototype(d);
}

}  // namespace kas::codec
