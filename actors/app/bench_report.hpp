#pragma once
// The `bench --report DIR` page: one self-contained HTML file (inline CSS and SVG charts drawn here,
// no scripts, fonts or anything fetched), so it opens offline and can be attached to a CI run as is.
#include <string>

#include "actors/app/bench_result.hpp"
#include "messages/result.hpp"

namespace kas {

// The page for `r`: header, summary table, throughput-over-time and latency-CDF charts.
// Total: empty sample sets get a "no samples" note, and non-finite numbers print as "n/a".
std::string render_bench_report(const bench_result& r);

// Creates `dir` with its parents (mkdir -p) and writes dir/index.html. The error names the path:
// "--report /x: cannot create directory: Permission denied".
status_or_error write_bench_report(const std::string& dir, const bench_result& r);

}  // namespace kas
