#pragma once
// What the apiserver's validation would refuse in the fields the scheduler reads, so that a manifest
// kubectl could never have created does not get scheduled here either. Names, namespaces, label
// keys and values, a Pod's containers and its nodeSelector are checked as apimachinery checks them;
// the errors read as its field errors do (`metadata.name: Invalid value: "Bad_Name": a lowercase
// RFC 1123 subdomain must ...`), so a user can search for them.
#include <string>

#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/name_validation.hpp"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/result.hpp"

namespace kas {

// The whole object; the error names the field path.
status_or_error validate_object(const k8s::core::Node& n);
status_or_error validate_object(const k8s::core::Pod& p);
status_or_error validate_object(const k8s::core::Namespace& n);
status_or_error validate_object(const k8s::scheduling::PriorityClass& pc);
status_or_error validate_object(const k8s::policy::PodDisruptionBudget& pdb);
// The metadata only: a PodGroup's spec is validated when it is compiled (compile_pod_group), in
// `run` as in `simulate`.
status_or_error validate_object(const k8s::scheduling::PodGroup& pg);
status_or_error validate_object(const k8s::coscheduling::PodGroup& pg);

}  // namespace kas
