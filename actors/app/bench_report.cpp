#include "actors/app/bench_report.hpp"

// The page is built as one string: text goes through html() (the only way user data enters it) and
// numbers through num()/coord(), which never print "nan" or "inf". Charts share one plot frame: linear
// axes from 0 to a "nice" maximum, so an all-zero or empty series still gets a finite scale.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace kas {

namespace {

constexpr size_t max_cdf_points = 500;
constexpr double svg_width = 760, svg_height = 300;
constexpr double margin_left = 64, margin_right = 24, margin_top = 16, margin_bottom = 46;

void html(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
}

std::string html(std::string_view s) {
  std::string out;
  html(out, s);
  return out;
}

// A number for people: fixed decimals, "n/a" for anything non-finite.
std::string num(double v, int decimals = 1) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
std::string num(I v) {
  return std::to_string(v);
}

// A number for SVG attributes: always finite.
std::string coord(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0; }

// 0 .. max in `step`s, where step is 1, 2 or 5 times a power of ten and there are about five ticks.
struct axis {
  double max = 1, step = 0.2;
};

axis make_axis(double data_max) {
  if (!std::isfinite(data_max) || data_max <= 0) data_max = 1;
  double raw = data_max / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  return {std::ceil(data_max / step - 1e-9) * step, step};
}

std::string tick_label(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return num(v, std::clamp(decimals, 0, 6));
}

struct plot {
  axis x, y;
  double left = margin_left, top = margin_top;
  double width = svg_width - margin_left - margin_right;
  double height = svg_height - margin_top - margin_bottom;

  double px(double v) const { return left + width * std::clamp(finite_or_zero(v) / x.max, 0.0, 1.0); }
  double py(double v) const { return top + height * (1 - std::clamp(finite_or_zero(v) / y.max, 0.0, 1.0)); }
  double bottom() const { return top + height; }
  double right() const { return left + width; }
};

void line(std::string& out, double x1, double y1, double x2, double y2, const char* cls) {
  out += "<line class=\"" + std::string(cls) + "\" x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" +
         coord(x2) + "\" y2=\"" + coord(y2) + "\"/>\n";
}

void text(std::string& out, double x, double y, const char* anchor, std::string_view s, const char* extra = "") {
  out += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">";
  html(out, s);
  out += "</text>\n";
}

void svg_open(std::string& out, std::string_view title) {
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + coord(svg_width) + " " + coord(svg_height) +
         "\" width=\"" + coord(svg_width) + "\" height=\"" + coord(svg_height) + "\" role=\"img\">\n<title>";
  html(out, title);
  out += "</title>\n";
}

// Grid lines, ticks with labels, and the two axis titles.
void draw_frame(std::string& out, const plot& p, std::string_view x_title, std::string_view y_title) {
  for (int i = 0; i * p.x.step <= p.x.max * (1 + 1e-9) && i <= 20; ++i) {
    double v = i * p.x.step, x = p.px(v);
    line(out, x, p.top, x, p.bottom(), "grid");
    line(out, x, p.bottom(), x, p.bottom() + 5, "axis");
    text(out, x, p.bottom() + 18, "middle", tick_label(v, p.x.step));
  }
  for (int i = 0; i * p.y.step <= p.y.max * (1 + 1e-9) && i <= 20; ++i) {
    double v = i * p.y.step, y = p.py(v);
    line(out, p.left, y, p.right(), y, "grid");
    line(out, p.left - 5, y, p.left, y, "axis");
    text(out, p.left - 8, y + 4, "end", tick_label(v, p.y.step));
  }
  line(out, p.left, p.bottom(), p.right(), p.bottom(), "axis");
  line(out, p.left, p.top, p.left, p.bottom(), "axis");
  text(out, p.left + p.width / 2, svg_height - 6, "middle", x_title);
  std::string rotate = " transform=\"rotate(-90 14 " + coord(p.top + p.height / 2) + ")\"";
  text(out, 14, p.top + p.height / 2, "middle", y_title, rotate.c_str());
}

std::string no_samples(std::string_view what) { return "<p class=\"note\">No samples: " + html(what) + ".</p>\n"; }

// (a) Pods bound per window, as steps over time, with scheduler_perf's threshold dashed across.
std::string throughput_chart(const bench_result& r) {
  const auto& w = r.throughput_windows;
  if (w.empty()) return no_samples("no throughput windows were recorded");
  double ws = std::isfinite(r.window_seconds) && r.window_seconds > 0 ? r.window_seconds : 1;
  double threshold = finite_or_zero(r.threshold);
  double peak = threshold;
  for (double v : w) peak = std::max(peak, finite_or_zero(v));

  plot p;
  p.x = make_axis(static_cast<double>(w.size()) * ws);
  p.y = make_axis(peak * 1.05);
  std::string out;
  svg_open(out, "Throughput over time (pods/s per " + num(ws, 2) + " s window)");
  draw_frame(out, p, "time since the first measured pod (s)", "pods/s");

  std::string d = "M" + coord(p.px(0)) + "," + coord(p.py(0));
  for (size_t i = 0; i < w.size(); ++i) {
    double y = p.py(w[i]);
    d += " L" + coord(p.px(static_cast<double>(i) * ws)) + "," + coord(y);
    d += " L" + coord(p.px(static_cast<double>(i + 1) * ws)) + "," + coord(y);
  }
  d += " L" + coord(p.px(static_cast<double>(w.size()) * ws)) + "," + coord(p.py(0));
  out += "<path class=\"series area\" d=\"" + d + " Z\"/>\n";

  if (threshold > 0) {
    line(out, p.left, p.py(threshold), p.right(), p.py(threshold), "threshold");
    text(out, p.right() - 4, p.py(threshold) - 5, "end", "threshold " + num(threshold, 0) + " pods/s",
         " class=\"threshold-label\"");
  }
  out += "</svg>\n";
  return out;
}

// At most max_cdf_points samples of the sorted set, first and last always kept: (latency, rank).
std::vector<std::pair<double, size_t>> cdf_points(const std::vector<double>& sorted) {
  std::vector<std::pair<double, size_t>> pts;
  size_t n = sorted.size();
  size_t k = std::min(n, max_cdf_points);
  for (size_t j = 0; j < k; ++j) {
    size_t i = k == 1 ? n - 1 : j * (n - 1) / (k - 1);
    pts.emplace_back(sorted[i], i + 1);
  }
  return pts;
}

void percentile_marker(std::string& out, const plot& p, double ms, double pct, const char* name) {
  double x = p.px(ms), y = p.py(pct);
  line(out, x, p.top, x, p.bottom(), "marker");
  out += "<circle class=\"marker-dot\" cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"4\"/>\n";
  bool left_side = x > p.left + p.width * 0.75;
  text(out, left_side ? x - 6 : x + 6, y + (pct > 90 ? 16 : -6), left_side ? "end" : "start",
       std::string(name) + " " + num(ms, 1) + " ms", " class=\"marker-label\"");
}

// (b) Share of measured pods bound within x ms of creation, with p50 and p99 marked on the curve.
std::string latency_chart(const bench_result& r) {
  std::vector<double> sorted;
  for (double v : r.latencies_ms)
    if (std::isfinite(v)) sorted.push_back(v);
  if (sorted.empty()) return no_samples("no pod was bound during the measured phase");
  percentiles pc = summarize(sorted);  // sorts; the markers then sit on the drawn curve

  plot p;
  p.x = make_axis(pc.max);
  p.y = {100, 20};
  std::string out;
  svg_open(out, "Latency CDF (pod created to bound, ms)");
  draw_frame(out, p, "latency, pod created to bound (ms)", "% of pods");

  const double n = static_cast<double>(sorted.size());
  std::string pts = coord(p.px(sorted.front())) + "," + coord(p.py(0));
  for (const auto& [ms, rank] : cdf_points(sorted))
    pts += " " + coord(p.px(ms)) + "," + coord(p.py(100.0 * static_cast<double>(rank) / n));
  out += "<polyline class=\"series\" points=\"" + pts + "\"/>\n";
  percentile_marker(out, p, pc.p50, 50, "p50");
  percentile_marker(out, p, pc.p99, 99, "p99");
  out += "</svg>\n";
  return out;
}

void row(std::string& out, std::string_view metric, std::string_view value_html, const char* cls = "") {
  out += "<tr><th>";
  html(out, metric);
  out += std::string("</th><td") + (*cls ? std::string(" class=\"") + cls + "\"" : "") + ">";
  out += value_html;
  out += "</td></tr>\n";
}

std::string pct_line(const percentiles& p, const char* unit, int decimals) {
  return html("avg " + num(p.avg, decimals) + " / p50 " + num(p.p50, decimals) + " / p90 " + num(p.p90, decimals) +
              " / p95 " + num(p.p95, decimals) + " / p99 " + num(p.p99, decimals) + " / max " +
              num(p.max, decimals) + " " + unit + " (" + std::to_string(p.samples) + " samples)");
}

std::string header(const bench_result& r) {
  std::string out = "<h1>Bench: " + html(r.workload.empty() ? "(unnamed workload)" : r.workload) + "</h1>\n<dl>\n";
  auto item = [&](std::string_view k, const std::string& v) {
    out += "<dt>" + html(k) + "</dt><dd>" + html(v) + "</dd>\n";
  };
  item("Workload file", r.workload_file.empty() ? "built-in default" : r.workload_file);
  item("Sizes", num(r.nodes) + " nodes, " + num(r.init_pods) + " initial pods, " + num(r.measured_pods) +
                    " measured pods");
  item("Runtime", num(r.threads) + " threads, " + num(r.workers) + " workers, " + num(r.binders) +
                      " binders, pipeline depth " + num(r.pipeline_depth));
  item("Batching", r.batching ? "on" : "off");
  item("Metric recording", r.record_metrics ? "on" : "off");
  item("malloc tcache_count", r.malloc_tcache);
  out += "</dl>\n";
  return out;
}

void throughput_rows(std::string& out, const bench_result& r) {
  row(out, "Throughput (per " + num(r.window_seconds, 2) + " s window)", pct_line(r.throughput, "pods/s", 1));
  if (std::isfinite(r.threshold) && r.threshold > 0) {
    double ratio = r.throughput.avg / r.threshold;
    bool pass = std::isfinite(ratio) && ratio >= 1;
    row(out, "scheduler_perf threshold", html(num(r.threshold, 0) + " pods/s"));
    row(out, "Ratio avg / threshold", html(num(ratio, 2) + (pass ? " (meets threshold)" : " (below threshold)")),
        pass ? "good" : "bad");
  } else {
    row(out, "scheduler_perf threshold", "none");
  }
  row(out, "Overall", html(num(r.overall_pods_per_second, 1) + " pods/s (" + num(r.measured_pods) + " pods in " +
                           num(r.measured_seconds, 3) + " s)"));
  row(out, "Latency, created to bound", pct_line(r.latency_ms, "ms", 1));
  row(out, "Raw kernel (one core, no actors)", html(num(r.raw_pods_per_second, 1) + " pods/s"));
  row(out, "Efficiency (avg / raw)", html(num(r.efficiency * 100, 1) + " %"));
}

void outcome_rows(std::string& out, const bench_result& r) {
  row(out, "Scheduled", html(num(r.scheduled) + " of " + num(r.measured_pods) + " measured pods"));
  row(out, "Attempts", html(num(r.attempts)));
  row(out, "Unschedulable", html(num(r.unschedulable)), r.unschedulable ? "warn" : "");
  row(out, "Conflicts (retried)", html(num(r.conflicts)));
  row(out, "Preempted", html(num(r.preempted)));
  row(out, "Events", html(num(r.events_scheduled) + " Scheduled, " + num(r.events_failed_scheduling) +
                          " FailedScheduling"));
  row(out, "Peak RSS", html(num(static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0), 1) + " MiB"));
  row(out, "Wall time", html(num(r.wall_seconds, 3) + " s"));
  size_t bad = r.violations.size();
  std::string inv = html(num(r.invariant_checks) + " checks, " + num(bad) + (bad == 1 ? " violation" : " violations"));
  if (!r.violations.empty()) {
    inv += "<ul class=\"violations\">";
    for (const auto& v : r.violations) inv += "<li>" + html(v) + "</li>";
    inv += "</ul>";
  }
  row(out, "Invariants", inv, r.violations.empty() ? "good" : "bad");
}

constexpr std::string_view style = R"(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:960px}
h1{font-size:1.5em;margin:0 0 .5em}h2{font-size:1.15em;margin:1.5em 0 .5em}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:0}dt{font-weight:600}dd{margin:0}
table{border-collapse:collapse}th,td{text-align:left;padding:4px 12px;border-bottom:1px solid #ddd;vertical-align:top}
th{font-weight:600;white-space:nowrap}.good{color:#1a7f37}.bad{color:#cf222e;font-weight:600}.warn{color:#9a6700}
ul.violations{margin:4px 0;padding-left:20px}.note{color:#666;font-style:italic}
svg{font-size:12px;fill:#444}.grid{stroke:#eee}.axis{stroke:#888}
.series{fill:none;stroke:#0969da;stroke-width:1.5}.area{fill:#0969da22}
.threshold{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:6 4}
.threshold-label{fill:#cf222e;paint-order:stroke;stroke:#fff;stroke-width:3px}
.marker{stroke:#8250df;stroke-dasharray:3 3}.marker-dot{fill:#8250df}
.marker-label{fill:#8250df;paint-order:stroke;stroke:#fff;stroke-width:3px}
</style>
)";

}  // namespace

std::string render_bench_report(const bench_result& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Bench: ";
  html(out, r.workload);
  out += "</title>\n";
  out += style;
  out += "</head>\n<body>\n";
  out += header(r);
  out += "<h2>Summary</h2>\n<table>\n";
  throughput_rows(out, r);
  outcome_rows(out, r);
  out += "</table>\n<h2>Throughput over time</h2>\n";
  out += throughput_chart(r);
  out += "<h2>Latency CDF</h2>\n";
  out += latency_chart(r);
  out += "</body>\n</html>\n";
  return out;
}

status_or_error write_bench_report(const std::string& dir, const bench_result& r) {
  namespace fs = std::filesystem;
  if (dir.empty()) return error{"--report: empty directory path"};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec && !fs::is_directory(dir, ec)) ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) return error{"--report " + dir + ": cannot create directory: " + ec.message()};

  std::string path = (fs::path(dir) / "index.html").string();
  std::string page = render_bench_report(r);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return error{"--report " + path + ": cannot write: " + std::strerror(errno)};
  f.write(page.data(), static_cast<std::streamsize>(page.size()));
  f.close();
  if (!f) return error{"--report " + path + ": cannot write: " + std::strerror(errno)};
  return ok_t{};
}

}  // namespace kas
