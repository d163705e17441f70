#include "report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "analysis/rank_spread.h"
#include "common/strings.h"
#include "common/units.h"
#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::report {

using analysis::JobAnalysis;
using analysis::RankAnalysis;
using analysis::TimeBreakdown;

namespace {

// |text| cut into lines of at most |width| at spaces, the first after |first|, the rest
// after |indent|.
std::string Wrap(std::string_view text, std::string_view first, std::string_view indent, size_t width) {
  std::string out(first);
  size_t line = first.size();
  bool line_empty = true;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (word.empty()) continue;
    if (!line_empty && line + 1 + word.size() > width) {
      out += '\n';
      out += indent;
      line = indent.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    line_empty = false;
  }
  return out + '\n';
}

std::string Pct(double v) { return fmt::format("{:.2f}%", v); }

void Heading(std::string* out, const std::string& title) {
  *out += fmt::format("\n== {} ==\n", title);
}

// The samples files' notes on their own sampling: a dozen per node, rarely what the
// reader came for, so one line says how many and where they are.
void SamplerNotes(std::string* out, const model::Trace& trace) {
  if (trace.sampler_notes.empty()) return;
  const size_t n = trace.sampler_notes.size();
  *out += fmt::format("note:     {} note{} from the sampler (read costs, slow NVML calls): --json has them\n", n,
                      n == 1 ? "" : "s");
}

// The rows of a per-rank table: every rank, or past opt.rank_rows ranks the three with the
// largest |key| and the three with the smallest, and one line of the distribution.
struct RankRows {
  std::vector<size_t> shown;  // indices, in the order to print
  std::string distribution;   // "" when every rank is shown
};

template <typename Key>
RankRows ChooseRankRows(const JobAnalysis& job, const TextOptions& opt, std::string_view what, Key key,
                        const std::function<std::string(double)>& format) {
  RankRows rows;
  const size_t n = job.ranks.size();
  constexpr size_t kEach = 3;
  if (n <= opt.rank_rows || n <= 2 * kEach || opt.all_ranks) {
    for (size_t i = 0; i < n; ++i) rows.shown.push_back(i);
    return rows;
  }
  std::vector<double> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = key(i);
  const analysis::RankSpread spread = analysis::SpreadOverRanks(values);
  rows.shown.assign(spread.order.begin(), spread.order.begin() + kEach);
  rows.shown.insert(rows.shown.end(), spread.order.end() - kEach, spread.order.end());
  rows.distribution = Wrap(fmt::format(
      "{} of {} ranks shown: the 3 with the largest {} and the 3 with the smallest. Over all ranks, {}: max {} "
      "(rank {}), p75 {}, median {}, p25 {}, min {} (rank {}). --all-ranks lists every rank.",
      kEach * 2, n, what, what, format(spread.max), job.ranks[spread.order.front()].trace->rank, format(spread.p75),
      format(spread.median), format(spread.p25), format(spread.min), job.ranks[spread.order.back()].trace->rank),
      "  ", "  ", 100);
  return rows;
}

void Inputs(std::string* out, const model::Trace& trace, const JobAnalysis& job, const TextOptions& opt) {
  Heading(out, "Inputs");
  const bool every = job.ranks.size() <= opt.rank_rows || opt.all_ranks;
  if (!every) {
    std::map<std::string, size_t> formats;
    uint64_t bytes = 0;
    for (const RankAnalysis& a : job.ranks) {
      ++formats[a.trace->format];
      bytes += a.trace->input_bytes;
    }
    std::string by_format;
    for (const auto& [f, k] : formats) by_format += fmt::format("{}{} {}", by_format.empty() ? "" : ", ", k, f);
    *out += fmt::format("{} ranks ({}), {} of traces; ranks with import issues follow (--all-ranks lists every rank)\n",
                        job.ranks.size(), by_format, FormatBytes(static_cast<int64_t>(bytes)));
  }
  size_t listed = 0;
  for (const RankAnalysis& a : job.ranks) {
    const model::RankTrace& r = *a.trace;
    if (!every && (r.stats.total() == 0 || ++listed > opt.max_rows)) continue;
    std::string dev = r.devices.empty() ? "" : r.devices.front().name;
    *out += fmt::format("rank {:<4} {:<8} {:>10}  {} GPU activities, {} host events{}{}  {}\n",
                        r.rank, r.format, FormatBytes(static_cast<int64_t>(r.input_bytes)),
                        r.GpuActivityCount(), r.host.size() + r.annotations.size() + r.host_events_dropped, dev.empty() ? "" : ", ",
                        dev, r.path);
    constexpr size_t kNotesShown = 4;
    for (size_t k = 0; k < r.notes.size() && k < kNotesShown; ++k)
      *out += fmt::format("          note: {}\n", r.notes[k]);
    if (r.notes.size() > kNotesShown)
      *out += fmt::format("          ... {} more notes (--json has all)\n", r.notes.size() - kNotesShown);
    for (size_t k = 0; k < static_cast<size_t>(model::ImportIssue::kCount); ++k) {
      auto issue = static_cast<model::ImportIssue>(k);
      if (!r.stats.count(issue)) continue;
      const auto& ex = r.stats.examples(issue);
      *out += fmt::format("          {} {}: {}{}\n", r.stats.count(issue), model::IssueName(issue),
                          model::IssueDescription(issue),
                          ex.empty() || ex[0].offset == 0
                              ? std::string()
                              : fmt::format(" (first at byte {}: {})", ex[0].offset, ex[0].what));
    }
    if (a.window.filtered && a.window.dropped)
      *out += fmt::format(
          "          window: {} GPU activities launched outside the profiled steps left out\n",
          a.window.dropped);
  }
  for (const auto& f : trace.failures) *out += fmt::format("FAILED    {}\n", f.message);
  for (const auto& w : trace.warnings) *out += fmt::format("warning:  {}\n", w);
  SamplerNotes(out, trace);
}

void BreakdownRow(std::string* out, const std::string& label, const TimeBreakdown& b, const std::string& note = "") {
  *out += fmt::format("{:<10} {:>11} {:>9} {:>12} {:>8} {:>10} {:>13}{}\n", label,
                      FormatDuration(b.span), Pct(b.compute_pct()), Pct(b.non_compute_pct()),
                      Pct(b.idle_pct()), b.has_comm() ? Pct(b.overlap_pct()) : "-",
                      FormatDuration(b.exposed_comm), note);
}

bool HasGpuActivities(const JobAnalysis& job) {
  for (const RankAnalysis& a : job.ranks)
    if (a.window.selected > 0) return true;
  return false;
}

void TimeSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  Heading(out, job.step_choice.CutsWindow() ? "GPU time breakdown (whole window, warm-up steps left out)"
                                             : "GPU time breakdown (whole window)");
  if (!HasGpuActivities(job)) {
    *out += "no GPU kernel timeline in these traces (commlens recordings hold communication\n"
            "operations only; the PyTorch profiler's traces have every kernel)\n";
    return;
  }
  *out += fmt::format("{:<10} {:>11} {:>9} {:>12} {:>8} {:>10} {:>13}\n", "rank", "span",
                      "compute", "non-compute", "idle", "overlap", "exposed comm");
  const RankRows rows = ChooseRankRows(
      job, opt, "idle share", [&](size_t i) { return job.ranks[i].time.total.idle_pct(); },
      [](double v) { return Pct(v); });
  for (size_t i : rows.shown) BreakdownRow(out, fmt::format("{}", job.ranks[i].trace->rank), job.ranks[i].time.total);
  *out += rows.distribution;
  *out += "  compute: only compute kernels running (with or without others); non-compute: only\n"
          "  communication/memory; overlap: share of communication time with compute beside it.\n";

  if (job.steps.empty()) return;
  Heading(out, "Per profiler step (mean over ranks)");
  *out += fmt::format("{:<10} {:>11} {:>9} {:>12} {:>8} {:>10} {:>13}\n", "step", "span",
                      "compute", "non-compute", "idle", "overlap", "exposed comm");
  for (size_t k = 0; k < job.steps.size(); ++k) {
    if (k == opt.max_steps) {
      *out += fmt::format("... {} more steps (--json has all)\n", job.steps.size() - opt.max_steps);
      break;
    }
    BreakdownRow(out, fmt::format("#{}", job.steps[k].number), job.steps[k].mean,
                 job.steps[k].left_out.empty() ? "" : "  left out: " + job.steps[k].left_out);
  }
  const analysis::StepChoice& c = job.step_choice;
  if (c.selected_by_user)
    *out += fmt::format("  the summary covers steps {} (--steps)\n", analysis::StepList(c.Summarized()));
  else if (c.LeavesOut())
    *out += "  left out of the summary: the leading steps over 1.5x the median step (warm-up: out of every\n"
            "  analysis) and any other over 3x (outliers: out of the step statistics only; their collectives\n"
            "  stay in the cross-rank findings). --steps chooses the steps, --all-events keeps everything.\n";
}

void KernelSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  if (!HasGpuActivities(job)) return;
  Heading(out, "GPU kernel breakdown (all ranks)");
  const analysis::KernelBreakdown& k = job.kernels;
  const model::TimeNs busy = k.busy();
  for (uint8_t b = 1; b < 8; ++b) {
    if (!k.state_time[b]) continue;
    *out += fmt::format("  {:<36} {:>11} {:>7.2f}% of busy time\n", analysis::ClassStateLabel(b),
                        FormatDuration(k.state_time[b]), busy ? 100.0 * k.state_time[b] / busy : 0.0);
  }
  *out += fmt::format("\n{:<{}} {:<13} {:>7} {:>11} {:>11} {:>11}\n", "top kernels", opt.name_width,
                      "class", "count", "total", "mean", "max");
  for (const analysis::KernelStat& s : k.top()) {
    *out += fmt::format("{:<{}} {:<13} {:>7} {:>11} {:>11} {:>11}\n", Shortened(s.name, opt.name_width),
                        opt.name_width, model::ActivityClassName(s.cls), s.count,
                        FormatDuration(s.total),
                        FormatDuration(s.count ? s.total / static_cast<model::TimeNs>(s.count) : 0),
                        FormatDuration(s.max));
  }
  if (k.kernels.size() > k.top_n)
    *out += fmt::format("... {} more kernels, {} in all (--top-kernels N lists more)\n",
                        k.kernels.size() - k.top_n, FormatDuration(k.rest_total()));
}

void IdleSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  if (!HasGpuActivities(job)) return;
  Heading(out, "Idle gaps per stream");
  *out += fmt::format("{:<6} {:>6} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "rank", "stream",
                      "gaps", "idle", "host_wait", "kernel_wait", "other", "busy");
  size_t rows = 0;
  for (const RankAnalysis& a : job.ranks) {
    for (const auto& s : a.idle) {
      if (rows++ < opt.max_rows)
        *out += fmt::format("{:<6} {:>6} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
                            a.trace->rank, s.stream, s.gaps(), FormatDuration(s.idle),
                            FormatDuration(s.kind_time[0]), FormatDuration(s.kind_time[1]),
                            FormatDuration(s.kind_time[2]), FormatDuration(s.busy));
    }
  }
  if (rows > opt.max_rows) *out += fmt::format("... {} more streams\n", rows - opt.max_rows);
  const analysis::JobIdle& idle = job.idle;
  *out += "\ngap length histogram (all ranks and streams):\n";
  const uint64_t max_count = *std::max_element(idle.bin_count.begin(), idle.bin_count.end());
  for (int b = 0; b < analysis::kGapBins; ++b) {
    size_t bar = max_count ? static_cast<size_t>(40.0 * idle.bin_count[b] / max_count) : 0;
    *out += fmt::format("  {:>10} {:>8} {:>11}  {}\n", analysis::GapBinLabel(b), idle.bin_count[b],
                        FormatDuration(idle.bin_time[b]), std::string(bar, '#'));
  }
  *out += "\nlongest gaps:\n";
  for (const analysis::JobIdle::RankGap& l : idle.longest)
    *out += fmt::format("  rank {} stream {}: {} {} after {}\n", l.rank, l.stream, FormatDuration(l.gap.length),
                        analysis::GapKindName(l.gap.kind), Shortened(l.gap.before, 70));
}

void CollectiveSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::CollectiveAnalysis& c = job.collectives;
  Heading(out, "Collectives (per process group, op and message size; all ranks)");
  if (c.buckets.empty()) {
    *out += "no communication operations in the window\n";
    return;
  }
  bool bench = false;
  for (const auto& b : c.buckets) bench |= b.bench_busbw_gbps >= 0;
  *out += fmt::format("{:<14} {:<14} {:>19} {:>6} {:>5} {:>10} {:>10} {:>10} {:>5} {:>13} {:>11} {:>11}{}\n", "group",
                      "op", "size", "count", "ranks", "total", "p50", "p99", "wait", "busbw(kernel)", "algbw(xfer)",
                      "busbw(xfer)", bench ? fmt::format(" {:>7}", "bench") : "");
  std::vector<const analysis::CollectiveBucket*> rows;
  for (const auto& b : c.buckets) rows.push_back(&b);
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->total > b->total; });
  auto gbps = [](double v, bool known) { return known ? fmt::format("{:.1f}", v) : std::string("-"); };
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == opt.max_rows) {
      *out += fmt::format("... {} more rows (--json has all)\n", rows.size() - opt.max_rows);
      break;
    }
    const auto& b = *rows[i];
    std::string group = b.group_desc.empty() ? b.group_name : b.group_name + ":" + b.group_desc;
    std::string size = b.size_lo < 0 ? "unknown" : FormatBytes(b.size_lo) + "-" + FormatBytes(b.size_hi);
    const double wait = b.wait_share();
    *out += fmt::format("{:<14} {:<14} {:>19} {:>6} {:>5} {:>10} {:>10} {:>10} {:>5} {:>13} {:>11} {:>11}{}\n",
                        Shortened(group, 14), analysis::BucketOpName(b), size, b.count, b.ranks, FormatDuration(b.total),
                        FormatDuration(b.p50), FormatDuration(b.p99),
                        wait < 0 ? std::string("-") : fmt::format("{:.0f}%", 100.0 * wait),
                        gbps(b.kernel_busbw_gbps, b.kernel_busbw_gbps > 0), gbps(b.transfer_algbw_gbps, b.transfer > 0),
                        gbps(b.transfer_busbw_gbps, b.transfer > 0),
                        bench ? fmt::format(" {:>7}", gbps(b.bench_busbw_gbps, b.bench_busbw_gbps >= 0)) : "");
  }
  *out += "  GB/s, nccl-tests definitions. busbw(kernel): over the GPU kernel time, which includes waiting\n"
          "  for the last rank to arrive: not the fabric's speed. algbw/busbw(xfer): over the transfer time,\n"
          "  after the last rank arrived (matched collectives and messages only). wait: share of their\n"
          "  kernel time spent waiting.";
  *out += bench ? " bench: the benchmark's busbw at that size and group size.\n" : "\n";
  if (std::any_of(c.buckets.begin(), c.buckets.end(), [](const auto& b) { return b.batched; }))
    *out += "  batch: sends and receives that ran as one kernel (batch_isend_irecv, a grouped send/recv); counted\n"
            "  per batch, its size the sum of its ops both ways and its time the kernel's: the bandwidth is the\n"
            "  batch's, both directions together.\n";
  if (const uint64_t unsized = c.unsized(); unsized > 0)
    *out += fmt::format("  {} of the {} operations have no known message size (the trace does not give it: an\n"
                        "  Nsight Systems export made without --include-blobs=true, see Inputs): counted and timed,\n"
                        "  no bandwidth.\n",
                        unsized, c.counted());
  if (const uint64_t untimed = c.untimed(); untimed > 0)
    *out += fmt::format("  {} of the {} operations have no GPU timing (recorded with --kernel-sample or "
                        "host times only, or never ended): counted, but left out of total, p50, p99 and bandwidth.\n",
                        untimed, c.counted());
  if (c.phase_timed > 0)
    *out += fmt::format("  {} of the {} operations have their wait from NCCL's kernel phases (their initial sync\n"
                        "  on each GPU's own clock: no clock alignment enters it; the last to arrive waited least).\n",
                        c.phase_timed, c.counted());

  if (!c.groups.empty()) {
    Heading(out, "Cross-rank: collectives matched by (process group, sequence number)");
    *out += fmt::format("{:<20} {:>8} {:>9} {:>12} {:>12} {:>12}\n", "group", "matched",
                        "unmatched", "skew p50", "skew p99", "skew max");
    for (const auto& g : c.groups) {
      std::string group = g.group_desc.empty() ? g.group_name : g.group_name + ":" + g.group_desc;
      *out += fmt::format("{:<20} {:>8} {:>9} {:>12} {:>12} {:>12}\n", Shortened(group, 20), g.matched,
                          g.unmatched, FormatDuration(g.skew_p50), FormatDuration(g.skew_p99),
                          FormatDuration(g.skew_max));
    }
    *out += fmt::format("\n{:<6} {:>14} {:>12} {:>8} {:>14}\n", "rank", "in collectives",
                        "waiting", "wait %", "arrived last");
    auto wait_pct = [&](size_t i) { return c.ranks[i].wait_pct(); };
    const RankRows rows = ChooseRankRows(job, opt, "wait share", wait_pct, [](double v) { return Pct(v); });
    for (size_t i : rows.shown) {
      const analysis::RankWait& r = c.ranks[i];
      *out += fmt::format("{:<6} {:>14} {:>12} {:>7.1f}% {:>14}\n", r.rank, FormatDuration(r.in_collectives),
                          FormatDuration(r.waiting), wait_pct(i), r.last_arrivals);
    }
    *out += rows.distribution;
    *out += "  skew: spread of a collective's GPU start across ranks; waiting: time a rank's\n"
            "  collective ran before the last rank joined it.\n";
  }
}

void RolesSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::ParallelRoles& roles = job.roles;
  if (roles.groups.empty()) return;
  Heading(out, "Parallelism roles (per process group)");
  *out += fmt::format("{:<20} {:>5} {:<9} {}\n", "group", "size", "role", "named by");
  for (const analysis::GroupRole& g : roles.groups) {
    const std::string name = g.description.empty() ? g.group : g.group + ":" + g.description;
    *out += fmt::format("{:<20} {:>5} {:<9} {}\n", Shortened(name, 20), g.size, analysis::RoleName(g.role), g.rule);
  }
  if (!roles.has_kernels) {
    *out += "  exposed communication per role needs a GPU kernel timeline (PyTorch profiler or Nsight traces)\n";
    return;
  }
  const std::vector<analysis::ParallelRole> present = roles.Present();
  std::string header = fmt::format("\n{:<10} {:>11}", "step", "span");
  for (analysis::ParallelRole r : present) header += fmt::format(" {:>16}", fmt::format("{} exposed", analysis::RoleShort(r)));
  *out += header + "\n";
  auto row = [&](const std::string& label, const analysis::RoleTimes& t, const std::string& note) {
    std::string line = fmt::format("{:<10} {:>11}", label, FormatDuration(t.span));
    for (analysis::ParallelRole r : present)
      line += fmt::format(" {:>16}", fmt::format("{} {:>5.1f}%", FormatDuration(t.exposed[static_cast<size_t>(r)]),
                                                   t.ExposedPct(r)));
    *out += line + note + "\n";
  };
  row(job.summary.over_steps ? "summary" : "window", roles.summary, "");
  size_t shown = 0;
  for (size_t i = 0; i < roles.steps.size(); ++i) {
    if (shown++ == opt.max_steps) {
      *out += fmt::format("... {} more steps (--json has all)\n", roles.steps.size() - opt.max_steps);
      break;
    }
    const analysis::JobStepBreakdown& s = job.steps[i];
    row(fmt::format("{}", roles.steps[i].step), roles.steps[i], s.left_out.empty() ? "" : "  (" + s.left_out + ")");
  }
  *out += "  exposed: a role's communication kernels running with no compute kernel beside them (mean rank;\n"
          "  % of the step). Where two roles' kernels run together with no compute, they share the time\n"
          "  evenly: the roles add up to the exposed communication of the breakdown.\n";
}

void CrossRankSection(std::string* out, const model::Trace& trace, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::CrossRankAnalysis& x = job.cross_rank;
  if (job.collectives.groups.empty()) return;
  Heading(out, "Cross-rank findings");
  *out += x.summary + "\n";
  if (trace.clock.applied) {
    *out += "\nclocks aligned from matched collectives (offset against rank " + std::to_string(trace.ranks[0].rank) +
            ", error bound):\n";
    const RankRows rows = ChooseRankRows(
        job, opt, "offset", [&](size_t i) { return static_cast<double>(trace.clock.ranks[i].offset); },
        [](double v) { return FormatDuration(static_cast<model::TimeNs>(v)); });
    for (size_t i : rows.shown) {
      const model::ClockOffset& o = trace.clock.ranks[i];
      *out += fmt::format("  rank {:<4} {:<20} {:>12} +- {}\n", o.rank, Shortened(o.host, 20), FormatDuration(o.offset),
                          o.bound < 0 ? std::string("(not linked)") : FormatDuration(o.bound));
    }
    *out += rows.distribution;
  }
  for (const std::string& n : trace.clock.notes) *out += "  clock: " + n + "\n";
  if (!x.stragglers.empty()) {
    const bool per_step = x.noise.steps > 0;
    *out += fmt::format("\n{:<6} {:>13} {:>9} {:>7} {:>14} {:>16} {:>18} {}\n", "rank", "arrived last", "matched",
                        "chance", "mean lateness", per_step ? "delay/step" : "delay", per_step ? "others waited/step" : "others waited",
                        "why");
    for (size_t i = 0; i < x.stragglers.size() && i < opt.max_rows; ++i) {
      const analysis::Straggler& s = x.stragglers[i];
      std::string why(analysis::LateCauseName(s.cause));
      if (s.mixed) {
        why = "mixed:";
        static constexpr const char* kParts[3] = {"compute", "host_idle", "other_collective"};
        for (int k = 0; k < 3; ++k)
          if (s.cause_share[k] >= 0.05) why += fmt::format(" {} {:.0f}%", kParts[k], 100.0 * s.cause_share[k]);
      } else if (!s.kernels.empty()) {
        why += ": " + Shortened(s.kernels.front(), 50);
      }
      *out += fmt::format("{:<6} {:>13} {:>9} {:>7.1f} {:>14} {:>16} {:>18} {}\n", s.rank, s.last_arrivals, s.matched,
                          s.chance_arrivals, FormatDuration(s.mean_lateness),
                          FormatDuration(static_cast<model::TimeNs>(per_step ? s.delay_per_step : static_cast<double>(s.delay))),
                          FormatDuration(static_cast<model::TimeNs>(per_step ? s.cost_per_step
                                                                             : static_cast<double>(s.cost_to_others))),
                          why);
    }
    *out += "  chance: last arrivals expected if the last were random (1/n of each collective of n ranks).\n"
            "  delay: wall time, its lateness summed (how much later those collectives began because of it);\n"
            "  others waited: rank-time, summed over the ranks that waited for it.\n"
            "  why: compute (its kernels ran longer before those collectives), host_idle (its GPU sat idle:\n"
            "  launched late), other_collective (busy in another group's), mixed (no one cause holds 70%),\n"
            "  unknown, none (noise).\n";
  }
  if (!x.steps.empty()) {
    *out += fmt::format("\n{:<8} {:>11} {:>15} {:>22} {:>22} {:>12}\n", "step", "collectives", "most often last",
                        "others waited for it", "all waits (rank-time)", "max skew");
    for (size_t i = 0; i < x.steps.size() && i < opt.max_rows; ++i) {
      const analysis::CrossRankStep& st = x.steps[i];
      *out += fmt::format("{:<8} {:>11} {:>15} {:>22} {:>22} {:>12}\n", st.number, st.collectives,
                          st.most_last_rank < 0 ? std::string("-")
                                                : fmt::format("rank {} ({}x)", st.most_last_rank, st.most_last_count),
                          FormatDuration(st.most_last_cost), FormatDuration(st.cost_to_others),
                          FormatDuration(st.max_skew));
    }
  }
  for (const analysis::Hang& h : x.hangs) *out += "hang: " + h.detail + "\n";
  if (!x.contention.empty()) {
    *out += fmt::format("\nprocess-group contention: {} with two groups' collectives at once (all ranks)\n",
                        FormatDuration(x.contended_time));
    *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>22} {:>7} {:>22}  {}\n", "group", "op", "size", "alone",
                        "busbw(xfer) p50 [IQR]", "overlap", "busbw(xfer) p50 [IQR]", "with");
    auto spread = [](const analysis::BandwidthSpread& b) {
      if (b.count == 0) return std::string("-");
      if (!b.enough()) return std::string("too few samples");
      return fmt::format("{:.1f} [{:.1f}-{:.1f}]", b.median, b.p25, b.p75);
    };
    for (const auto& c : x.contention) {
      std::string with;
      for (const auto& g : c.with_groups) with += (with.empty() ? "" : ",") + g;
      *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>22} {:>7} {:>22}  {}\n", Shortened(c.group, 14),
                          model::CommOpName(c.op), c.size_lo < 0 ? "unknown" : FormatBytes(c.size_lo), c.alone.count,
                          spread(c.alone), c.overlapped.count, spread(c.overlapped), with);
    }
    *out += "  busbw over each op's transfer time (after its last rank arrived), in GB/s; an op counts as\n"
            "  overlapped when its transfer and another group's ran at once on the rank.\n";
  }
  const analysis::Pipeline& p = x.pipeline;
  if (p.detected) {
    *out += fmt::format("\npipeline: {} stages{}, {} micro-batches per step, {}; bubble {:.1f}% (ideal {:.1f}%){}\n",
                        p.stages, p.replicas > 1 ? fmt::format(" x {} replicas", p.replicas) : "",
                        p.microbatches > 0 ? std::to_string(p.microbatches) : "?", p.schedule, 100.0 * p.bubble_fraction,
                        100.0 * p.ideal_fraction,
                        p.idle_known ? "" : "; no kernel timeline: the bubble is the waiting in send/recv");
    if (!p.schedule_rule.empty()) *out += fmt::format("  found by: {}\n", p.schedule_rule);
    if (p.pace_stage >= 0)
      *out += fmt::format("  stage {} sets the pace: {} of compute per step against the median stage's {}\n",
                          p.pace_stage, FormatDuration(p.pace_compute), FormatDuration(p.median_compute));
    if (p.replicas > 1) {
      std::string each;
      for (double b : p.replica_bubble) each += fmt::format("{}{:.1f}%", each.empty() ? "" : ", ", 100.0 * b);
      *out += fmt::format("  bubble per replica: {} (spread {:.1f} points)\n", each, 100.0 * p.replica_spread);
    }
    for (const auto& s : p.per_stage)
      *out += fmt::format("  {}stage {:<2} rank {:<4} bubble {:5.1f}% (paced {:>6})  compute {:>10}  warm-up {:>10}  "
                          "steady {:>10}  cool-down {:>10}\n",
                          p.replicas > 1 ? fmt::format("replica {:<2} ", s.replica) : "", s.stage, s.rank,
                          100.0 * s.idle_share, s.paced_ideal >= 0 ? fmt::format("{:.1f}%", 100.0 * s.paced_ideal) : "-",
                          p.idle_known ? FormatDuration(s.compute) : std::string("-"),
                          FormatDuration(s.warmup_idle), FormatDuration(s.steady_idle), FormatDuration(s.cooldown_idle));
    *out += "  bubble: a stage's idle and waiting-in-send/recv share of its step (median step); paced: the bubble\n"
            "  the schedule leaves it when compute is all the step costs, the slowest stage's setting the pace (with\n"
            "  balanced stages the ideal, a little above it when interleaved); compute: its compute kernel time per step; warm-up/steady/cool-down: the bubble\n"
            "  before its first message ended, until its last one started, after (summed over steps).\n";
  }
  if (!x.protocols.empty()) {
    *out += fmt::format("\n{:<14} {:<14} {:>10} {:<10} {:<8} {:>8} {:>7} {:>9}\n", "group", "op", "size", "algorithm",
                        "protocol", "channels", "count", "busbw");
    for (size_t i = 0; i < x.protocols.size() && i < opt.max_rows; ++i) {
      const auto& r = x.protocols[i];
      *out += fmt::format("{:<14} {:<14} {:>10} {:<10} {:<8} {:>8} {:>7} {:>9.1f}\n", Shortened(r.group, 14),
                          model::CommOpName(r.op), r.size_lo < 0 ? "unknown" : FormatBytes(r.size_lo), r.algorithm,
                          r.protocol, r.channels, r.count, r.busbw);
    }
  }
}

// Nothing at all when the trace has no counters, so reports without them stay as they were.
void CounterSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::CounterAnalysis& c = job.counters;
  if (c.empty()) return;
  Heading(out, "Network and GPU counters");
  if (!c.nics.empty()) {
    *out += fmt::format("{:<12} {:<14} {:<10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7}\n", "host", "device", "kind",
                        "tx", "rx", "peak tx", "peak rx", "line", "errors");
    for (size_t i = 0; i < c.nics.size() && i < opt.max_rows; ++i) {
      const analysis::NicPort& n = c.nics[i];
      const std::string line =
          n.line_rate_bits_per_s > 0 ? fmt::format("{:.0f}", n.line_rate_bits_per_s * 1e-9) : std::string("?");
      *out += fmt::format("{:<12} {:<14} {:<10} {:>10} {:>10} {:>9.2f} {:>9.2f} {:>9} {:>7.0f}\n", Shortened(n.host, 12),
                          Shortened(n.device, 14), n.kind, FormatBytes(static_cast<int64_t>(n.tx_bytes)),
                          FormatBytes(static_cast<int64_t>(n.rx_bytes)), n.peak_tx_bytes_per_s * 8e-9,
                          n.peak_rx_bytes_per_s * 8e-9, line, n.errors);
    }
    if (c.nics.size() > opt.max_rows)
      *out += fmt::format("... {} more ports (--json has all)\n", c.nics.size() - opt.max_rows);
    *out += "  peak and line rate in Gb/s; errors: error, retransmit and drop counters summed.\n";
    for (size_t i = 0; i < c.findings.size() && i < opt.max_rows; ++i)
      *out += fmt::format("{}: {}\n", analysis::NicFinding::kSeverity, c.findings[i].text);
    if (c.findings.size() > opt.max_rows)
      *out += fmt::format("... {} more ports with errors (--json nic_findings has all)\n",
                          c.findings.size() - opt.max_rows);
  }
  if (!c.wire.empty()) {
    *out += fmt::format("\n{:<14} {:<14} {:>10} {:>7} {:>10} {:>10} {:>6} {:>11} {:>8}\n", "group", "op", "size",
                        "count", "claimed", "NIC tx", "ratio", "tx Gb/s", "of line");
    for (size_t i = 0; i < c.wire.size() && i < opt.max_rows; ++i) {
      const analysis::WireBytes& w = c.wire[i];
      *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>10} {:>10} {:>6.2f} {:>11.2f} {:>8}\n", Shortened(w.group, 14),
                          model::CommOpName(w.op), w.size_lo < 0 ? "unknown" : FormatBytes(w.size_lo), w.count,
                          FormatBytes(static_cast<int64_t>(w.claimed_bytes)),
                          FormatBytes(static_cast<int64_t>(w.wire_bytes)), w.ratio(), w.wire_bytes_per_s() * 8e-9,
                          w.line_rate_known() ? Pct(100.0 * w.line_share()) : std::string("?"));
    }
    if (c.wire.size() > opt.max_rows)
      *out += fmt::format("... {} more rows (--json has all)\n", c.wire.size() - opt.max_rows);
    *out += "  NIC tx bytes during the collectives of one rank per host, against their bytes times\n"
            "  the host's ranks (the counter interpolated between samples; docs/json-report.md);\n"
            "  tx Gb/s: those bytes over the collectives' summed GPU time; of line: against the\n"
            "  summed line rate of the ports counted (? when a port's is unknown).\n";
  }
  if (!c.gpu_metric_totals.empty()) {
    *out += fmt::format("\n{:<44} {:<8} {:>7} {:>9} {:>12} {:>12} {:>12}\n", "GPU metric", "unit", "series",
                        "samples", "mean", "min", "max");
    for (const analysis::GpuMetricTotal& m : c.gpu_metric_totals)
      *out += fmt::format("{:<44} {:<8} {:>7} {:>9} {:>12.4g} {:>12.4g} {:>12.4g}\n", Shortened(m.name, 44),
                          Shortened(m.unit, 8), m.series, m.samples, m.mean, m.min, m.max);
    *out += "  series: GPUs (and ranks) sampled; mean over all their samples.\n";
  }
}

// The page section a finding points at, by the heading the text report gives it.
std::string_view SectionHeading(std::string_view section) {
  if (section == "crossrank") return "Cross-rank findings";
  if (section == "collectives") return "Collectives";
  if (section == "waits") return "Cross-rank: collectives matched";
  if (section == "breakdown") return "GPU time breakdown";
  if (section == "idle") return "Idle gaps per stream";
  if (section == "counters") return "Network and GPU counters";
  if (section == "inputs") return "Inputs";
  return section;
}

// What was analyzed, in two or three lines: the ranks (and the missing ones), the steps,
// and how the clocks were checked when that changed what the report compares.
void JobSection(std::string* out, const model::Trace& trace, const analysis::JobAnalysis& job) {
  Heading(out, "Job");
  std::set<std::string> hosts;
  for (const model::RankTrace& r : trace.ranks) hosts.insert(r.hostname);
  std::string missing;
  for (int r : trace.missing_ranks) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  *out += trace.missing_ranks.empty()
              ? fmt::format("{} rank{}", trace.ranks.size(), trace.ranks.size() == 1 ? "" : "s")
              : fmt::format("{} of {} ranks (no trace of rank{} {})", trace.ranks.size(), trace.world_size,
                            trace.missing_count == 1 ? "" : "s", Shortened(missing, 60));
  if (!(hosts.size() == 1 && hosts.begin()->empty()))
    *out += fmt::format(" on {} host{}", hosts.size(), hosts.size() == 1 ? "" : "s");
  const analysis::StepNoise& n = job.cross_rank.noise;
  if (n.steps > 0)
    *out += fmt::format("; {} profiler step{}, median step {} (+-{})", n.steps, n.steps == 1 ? "" : "s",
                        FormatDuration(n.median), FormatDuration(n.noise));
  *out += "\n";
  const model::ClockAlignment& c = trace.clock;
  if ((c.aligned_by_check || (c.mode == model::AlignMode::kNone && c.raw.violated())) && !c.notes.empty())
    *out += Wrap(c.notes.front(), "", "  ", 100);
}

// The verdict first: every finding, hangs first then the largest costs, each with the
// section that holds its evidence.
void FindingsSection(std::string* out, const analysis::JobAnalysis& job) {
  Heading(out, "Findings");
  if (job.findings.empty()) {
    *out += "Nothing stands out: no rank holds the others up, and no cost rule fired (the tables below have the "
            "numbers).\n";
    return;
  }
  for (const analysis::Finding& f : job.findings)
    *out += Wrap(fmt::format("{} [see: {}]", f.text, SectionHeading(f.section)), "- ", "  ", 100);
}

}  // namespace

std::string AnalyzeToText(const model::Trace& trace, const JobAnalysis& job,
                          const TextOptions& options) {
  std::string out;
  JobSection(&out, trace, job);
  FindingsSection(&out, job);
  Inputs(&out, trace, job, options);
  TimeSection(&out, job, options);
  KernelSection(&out, job, options);
  IdleSection(&out, job, options);
  CollectiveSection(&out, job, options);
  RolesSection(&out, job, options);
  CrossRankSection(&out, trace, job, options);
  CounterSection(&out, job, options);
  return out;
}

}  // namespace commlens::report
