#pragma once
// apimachinery's name validators (k8s.io/apimachinery/pkg/util/validation), one implementation for
// every caller: manifest validation (config/object_validation) wants the reason, the object model
// (resource names, topology keys, selector label keys in cache/) only whether the name is valid.
// Each *_problem returns "" when `s` is valid, else the reason as the apiserver words it (the text
// after `Invalid value: "...": `), so users can search for it.
#include <string>
#include <string_view>

namespace kas {

std::string dns1123_subdomain_problem(std::string_view s);  // <= 253, labels joined by '.'
std::string dns1123_label_problem(std::string_view s);      // <= 63, [a-z0-9]([-a-z0-9]*[a-z0-9])?
std::string qualified_name_problem(std::string_view s);     // [prefix/]name: label keys, topology keys
std::string label_value_problem(std::string_view s);        // "" or a name part of <= 63

inline bool is_dns1123_subdomain(std::string_view s) { return dns1123_subdomain_problem(s).empty(); }
inline bool is_qualified_name(std::string_view s) { return qualified_name_problem(s).empty(); }

}  // namespace kas
