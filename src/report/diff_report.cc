#include "report/diff_report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "common/output_file.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/html/html_assets.h"
#include "report/html/html_page.h"

namespace commlens::report {

namespace {

using analysis::DiffRow;
using analysis::DiffUnit;

const char* UnitName(DiffUnit u) {
  switch (u) {
    case DiffUnit::kTime: return "us";
    case DiffUnit::kBandwidth: return "GB/s";
    case DiffUnit::kRatio: return "x";
  }
  return "";
}

// Times are held in ns; JSON gives them in us, as every commlens JSON does.
double InUnit(DiffUnit u, double v) { return u == DiffUnit::kTime ? v / 1000.0 : v; }

std::string Value(DiffUnit u, double v) {
  switch (u) {
    case DiffUnit::kTime: return FormatDuration(static_cast<int64_t>(std::llround(v)));
    case DiffUnit::kBandwidth: return fmt::format("{:.1f} GB/s", v);
    case DiffUnit::kRatio: return fmt::format("{:.3f}", v);
  }
  return "";
}

std::string Signed(DiffUnit u, double v) {
  const std::string s = Value(u, std::abs(v));
  return (v < 0 ? "-" : "+") + s;
}

std::string Percent(const DiffRow& r) {
  if (!r.known_a || !r.known_b) return r.known_a ? "only in A" : "only in B";
  if (r.a == 0) return r.b == 0 ? "0%" : "new";
  return fmt::format("{:+.1f}%", 100.0 * r.relative);
}

std::string IntervalText(const DiffRow& r) {
  if (!r.interval) return "too few samples";
  return fmt::format("[{}, {}]", Signed(r.unit, r.interval->lo), Signed(r.unit, r.interval->hi));
}

// |per|: "step", or "slice" for runs without profiler steps.
std::string SectionTitle(const std::string& s, const char* per) {
  static const std::map<std::string, const char*> kTitles = {
      {"step", "Step"},
      {"breakdown", "Time breakdown per {} (mean rank)"},
      {"collective", "Collectives per {} (mean rank; busbw over the transfer time)"},
      {"kernel", "Kernels per {} (mean rank; the longest in either run)"},
      {"rank", "Waiting for each rank per {} (the others' rank-time)"},
      {"whatif", "What-if replay"}};
  auto it = kTitles.find(s);
  return it == kTitles.end() ? "" : fmt::format(fmt::runtime(it->second), per);
}

// What a change in the headline list says: the quantity, A and B, and what it costs.
std::string ChangeLine(const DiffRow& r, const char* per) {
  std::string line = fmt::format("{} {}: {} -> {} ({})", r.section, Shortened(r.shown, 90), Value(r.unit, r.a), Value(r.unit, r.b), Percent(r));
  if (r.unit == DiffUnit::kBandwidth && r.step_cost != 0)
    line += fmt::format(", its transfers {} per {}", Signed(DiffUnit::kTime, r.step_cost), per);
  return line;
}

nlohmann::json RunJson(const analysis::DiffRun& run, const std::string& name) {
  nlohmann::json steps = nlohmann::json::array();
  for (double t : run.step_times) steps.push_back(t / 1000.0);
  return {{"input", name},
          {"formats", run.formats},
          {"ranks", run.ranks},
          {"steps", run.steps},
          {"over_steps", run.over_steps},
          {"straggler", run.straggler},
          {"straggler_gain", run.straggler_gain},
          {"step_times_us", steps}};
}

}  // namespace

nlohmann::json DiffJson(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DiffRow& r : diff.rows) {
    nlohmann::json interval = nullptr;
    if (r.interval) interval = {InUnit(r.unit, r.interval->lo), InUnit(r.unit, r.interval->hi)};
    rows.push_back({{"section", r.section},
                    {"name", r.name},
                    {"shown", r.shown},
                    {"unit", UnitName(r.unit)},
                    {"in_a", r.in_a},
                    {"in_b", r.in_b},
                    {"known_a", r.known_a},
                    {"known_b", r.known_b},
                    {"steps_a", r.steps_a},
                    {"steps_b", r.steps_b},
                    {"a", InUnit(r.unit, r.a)},
                    {"b", InUnit(r.unit, r.b)},
                    {"change", InUnit(r.unit, r.change)},
                    {"relative", r.relative},
                    {"interval", interval},
                    {"beyond_noise", r.beyond_noise},
                    {"step_cost_us", r.step_cost / 1000.0}});
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const DiffRow* r : diff.Changes()) changes.push_back(static_cast<size_t>(r - diff.rows.data()));
  return {{"schema", "commlens.diff"},
          {"schema_version", 1},
          {"a", RunJson(diff.a, names.a)},
          {"b", RunJson(diff.b, names.b)},
          {"level", options.level},
          {"min_change", options.min_change},
          {"warnings", diff.warnings},
          {"changes", changes},
          {"rows", rows}};
}

std::string DiffText(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options,
                     size_t rows) {
  std::string out;
  const char* per = diff.a.over_steps ? "step" : "slice";
  auto run_line = [](const analysis::DiffRun& r) {
    return r.over_steps ? fmt::format("{}; {} ranks, {} steps", r.formats, r.ranks, r.steps)
                        : fmt::format("{}; {} ranks, compared over {} slice{} of equal operation counts", r.formats,
                                      r.ranks, r.steps, r.steps == 1 ? "" : "s");
  };
  const int level = static_cast<int>(std::lround(100.0 * options.level));
  out += fmt::format("commlens diff\n  A: {} ({})\n  B: {} ({})\n", names.a, run_line(diff.a), names.b, run_line(diff.b));
  for (const std::string& w : diff.warnings) out += "  warning: " + w + "\n";
  for (const DiffRow& r : diff.rows)
    if (r.section == "step") {
      out += fmt::format("  step time: A {}, B {}: {} ({}), {}% interval {}: {}\n", Value(r.unit, r.a), Value(r.unit, r.b),
                         Signed(r.unit, r.change), Percent(r), level, IntervalText(r),
                         !r.interval ? "no noise estimate" : r.beyond_noise ? "beyond noise" : "within noise");
    }
  auto blame = [](const analysis::DiffRun& r) {
    if (r.straggler.empty()) return std::string("none");
    return r.straggler_gain > 0 ? fmt::format("{} (fixing it: {:.1f}% shorter step)", r.straggler, 100.0 * r.straggler_gain)
                                : r.straggler;
  };
  out += fmt::format("  the verdict blames: A {}; B {}\n", blame(diff.a), blame(diff.b));

  const auto changes = diff.Changes();
  out += fmt::format("\nChanges beyond the runs' {0}-to-{0} noise ({2}% interval over {0}s leaves out 0, and at least "
                     "{1:.0f}% of A), largest time per {0} first:\n",
                     per, 100.0 * options.min_change, level);
  if (changes.empty()) out += fmt::format("  none: every difference is within what the {}s of one run vary by\n", per);
  for (const DiffRow* r : changes) out += "  - " + ChangeLine(*r, per) + "\n";

  std::string section;
  size_t shown = 0, more = 0;
  auto flush_more = [&] {
    if (more) out += fmt::format("  ... {} more (--json or --html has all)\n", more);
    more = 0;
  };
  for (const DiffRow& r : diff.rows) {
    if (r.section == "step") continue;
    if (r.section != section) {
      flush_more();
      section = r.section, shown = 0;
      out += fmt::format("\n{}\n  {:<58} {:>12} {:>12} {:>9}  {}% interval of the change\n", SectionTitle(section, per), "",
                         "A", "B", "change", level);
    }
    if (shown++ >= rows) {
      ++more;
      continue;
    }
    const std::string a = r.known_a ? Value(r.unit, r.a) : "-";
    const std::string b = r.known_b ? Value(r.unit, r.b) : "-";
    out += fmt::format("{} {:<58} {:>12} {:>12} {:>9}  {}\n", r.beyond_noise ? " *" : "  ", Shortened(r.shown, 58), a, b,
                       Percent(r), r.known_a && r.known_b ? IntervalText(r) : "");
  }
  flush_more();
  out += "\n* beyond noise\n";
  return out;
}

Status WriteDiffPage(const analysis::RunDiff& diff, const DiffNames& names, const analysis::DiffOptions& options,
                     const std::string& path) {
  nlohmann::json data = DiffJson(diff, names, options);
  const std::string title = fmt::format("commlens diff: {} against {}", names.b, names.a);
  data["title"] = title;
  Result<std::string> page = html::RenderPage(title, data, html::EmbeddedAssets().diff_js);
  if (!page.ok()) return page.status();
  return WriteWholeFile(path, *page);
}

}  // namespace commlens::report
