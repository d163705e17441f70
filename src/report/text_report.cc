#include "report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::report {

using analysis::JobAnalysis;
using analysis::RankAnalysis;
using analysis::TimeBreakdown;

std::string FormatDuration(model::TimeNs ns) {
  double v = static_cast<double>(ns);
  if (std::abs(v) < 1e3) return fmt::format("{} ns", ns);
  if (std::abs(v) < 1e6) return fmt::format("{:.1f} us", v / 1e3);
  if (std::abs(v) < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::abs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{} {}", static_cast<int64_t>(v), kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

namespace {

std::string Cut(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
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

void Inputs(std::string* out, const model::Trace& trace, const JobAnalysis& job) {
  Heading(out, "Inputs");
  for (const RankAnalysis& a : job.ranks) {
    const model::RankTrace& r = *a.trace;
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

void BreakdownRow(std::string* out, const std::string& label, const TimeBreakdown& b) {
  *out += fmt::format("{:<10} {:>11} {:>9} {:>12} {:>8} {:>10} {:>13}\n", label,
                      FormatDuration(b.span), Pct(b.compute_pct()), Pct(b.non_compute_pct()),
                      Pct(b.idle_pct()), b.has_comm() ? Pct(b.overlap_pct()) : "-",
                      FormatDuration(b.exposed_comm));
}

bool HasGpuActivities(const JobAnalysis& job) {
  for (const RankAnalysis& a : job.ranks)
    if (a.window.selected > 0) return true;
  return false;
}

void TimeSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  Heading(out, "GPU time breakdown (whole window)");
  if (!HasGpuActivities(job)) {
    *out += "no GPU kernel timeline in these traces (commlens recordings hold communication\n"
            "operations only; the PyTorch profiler's traces have every kernel)\n";
    return;
  }
  *out += fmt::format("{:<10} {:>11} {:>9} {:>12} {:>8} {:>10} {:>13}\n", "rank", "span",
                      "compute", "non-compute", "idle", "overlap", "exposed comm");
  for (const RankAnalysis& a : job.ranks)
    BreakdownRow(out, fmt::format("{}", a.trace->rank), a.time.total);
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
    BreakdownRow(out, fmt::format("#{}", job.steps[k].number), job.steps[k].mean);
  }
}

void KernelSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  if (!HasGpuActivities(job)) return;
  Heading(out, "GPU kernel breakdown (all ranks)");
  const analysis::KernelBreakdown& k = job.kernels;
  model::TimeNs busy = 0;
  for (int b = 1; b < 8; ++b) busy += k.state_time[b];
  for (uint8_t b = 1; b < 8; ++b) {
    if (!k.state_time[b]) continue;
    *out += fmt::format("  {:<36} {:>11} {:>7.2f}% of busy time\n", analysis::ClassStateLabel(b),
                        FormatDuration(k.state_time[b]), busy ? 100.0 * k.state_time[b] / busy : 0.0);
  }
  *out += fmt::format("\n{:<{}} {:<13} {:>7} {:>11} {:>11} {:>11}\n", "top kernels", opt.name_width,
                      "class", "count", "total", "mean", "max");
  for (const analysis::KernelStat& s : k.top()) {
    *out += fmt::format("{:<{}} {:<13} {:>7} {:>11} {:>11} {:>11}\n", Cut(s.name, opt.name_width),
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
  std::array<uint64_t, analysis::kGapBins> bins{};
  std::array<model::TimeNs, analysis::kGapBins> bin_time{};
  struct Longest {
    int rank;
    const analysis::StreamIdle* stream;
    const analysis::Gap* gap;
  };
  std::vector<Longest> longest;
  size_t rows = 0;
  for (const RankAnalysis& a : job.ranks) {
    for (const auto& s : a.idle) {
      uint64_t gaps = s.kind_count[0] + s.kind_count[1] + s.kind_count[2];
      if (rows++ < opt.max_rows)
        *out += fmt::format("{:<6} {:>6} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
                            a.trace->rank, s.stream, gaps, FormatDuration(s.idle),
                            FormatDuration(s.kind_time[0]), FormatDuration(s.kind_time[1]),
                            FormatDuration(s.kind_time[2]), FormatDuration(s.busy));
      for (int b = 0; b < analysis::kGapBins; ++b) {
        bins[b] += s.bin_count[b];
        bin_time[b] += s.bin_time[b];
      }
      for (const auto& g : s.longest) longest.push_back({a.trace->rank, &s, &g});
    }
  }
  if (rows > opt.max_rows) *out += fmt::format("... {} more streams\n", rows - opt.max_rows);
  *out += "\ngap length histogram (all ranks and streams):\n";
  uint64_t max_count = *std::max_element(bins.begin(), bins.end());
  for (int b = 0; b < analysis::kGapBins; ++b) {
    size_t bar = max_count ? static_cast<size_t>(40.0 * bins[b] / max_count) : 0;
    *out += fmt::format("  {:>10} {:>8} {:>11}  {}\n", analysis::GapBinLabel(b), bins[b],
                        FormatDuration(bin_time[b]), std::string(bar, '#'));
  }
  std::sort(longest.begin(), longest.end(),
            [](const Longest& a, const Longest& b) { return a.gap->length > b.gap->length; });
  *out += "\nlongest gaps:\n";
  for (size_t i = 0; i < longest.size() && i < 5; ++i) {
    const Longest& l = longest[i];
    *out += fmt::format("  rank {} stream {}: {} {} after {}\n", l.rank, l.stream->stream,
                        FormatDuration(l.gap->length), analysis::GapKindName(l.gap->kind),
                        Cut(l.gap->before, 70));
  }
}

void CollectiveSection(std::string* out, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::CollectiveAnalysis& c = job.collectives;
  Heading(out, "Collectives (per process group, op and message size; all ranks)");
  if (c.buckets.empty()) {
    *out += "no communication operations in the window\n";
    return;
  }
  *out += fmt::format("{:<14} {:<14} {:>19} {:>6} {:>5} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "group",
                      "op", "size", "count", "ranks", "total", "p50", "p99", "algbw", "busbw");
  std::vector<const analysis::CollectiveBucket*> rows;
  for (const auto& b : c.buckets) rows.push_back(&b);
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->total > b->total; });
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == opt.max_rows) {
      *out += fmt::format("... {} more rows (--json has all)\n", rows.size() - opt.max_rows);
      break;
    }
    const auto& b = *rows[i];
    std::string group = b.group_desc.empty() ? b.group_name : b.group_name + ":" + b.group_desc;
    std::string size = b.size_lo < 0 ? "?" : FormatBytes(b.size_lo) + "-" + FormatBytes(b.size_hi);
    std::string alg = b.algbw_gbps > 0 ? fmt::format("{:.1f}", b.algbw_gbps) : "-";
    std::string bus = b.busbw_gbps > 0 ? fmt::format("{:.1f}", b.busbw_gbps) : "-";
    *out += fmt::format("{:<14} {:<14} {:>19} {:>6} {:>5} {:>10} {:>10} {:>10} {:>9} {:>9}\n",
                        Cut(group, 14), model::CommOpName(b.op), size, b.count, b.ranks,
                        FormatDuration(b.total), FormatDuration(b.p50), FormatDuration(b.p99), alg,
                        bus);
  }
  *out += "  algbw/busbw in GB/s (nccl-tests definitions; GPU kernel time).\n";
  uint64_t untimed = 0, count = 0;
  for (const auto& b : c.buckets) {
    untimed += b.untimed;
    count += b.count;
  }
  if (untimed > 0)
    *out += fmt::format("  {} of the {} operations have no GPU timing (recorded with --kernel-sample, "
                        "or never ended): counted, but left out of total, p50, p99 and bandwidth.\n",
                        untimed, count);

  if (!c.groups.empty()) {
    Heading(out, "Cross-rank: collectives matched by (process group, sequence number)");
    *out += fmt::format("{:<20} {:>8} {:>9} {:>12} {:>12} {:>12}\n", "group", "matched",
                        "unmatched", "skew p50", "skew p99", "skew max");
    for (const auto& g : c.groups) {
      std::string group = g.group_desc.empty() ? g.group_name : g.group_name + ":" + g.group_desc;
      *out += fmt::format("{:<20} {:>8} {:>9} {:>12} {:>12} {:>12}\n", Cut(group, 20), g.matched,
                          g.unmatched, FormatDuration(g.skew_p50), FormatDuration(g.skew_p99),
                          FormatDuration(g.skew_max));
    }
    *out += fmt::format("\n{:<6} {:>14} {:>12} {:>8} {:>14}\n", "rank", "in collectives",
                        "waiting", "wait %", "arrived last");
    for (const auto& r : c.ranks)
      *out += fmt::format("{:<6} {:>14} {:>12} {:>7.1f}% {:>14}\n", r.rank,
                          FormatDuration(r.in_collectives), FormatDuration(r.waiting),
                          r.in_collectives ? 100.0 * r.waiting / r.in_collectives : 0.0,
                          r.last_arrivals);
    *out += "  skew: spread of a collective's GPU start across ranks; waiting: time a rank's\n"
            "  collective ran before the last rank joined it.\n";
  }
}

void CrossRankSection(std::string* out, const model::Trace& trace, const JobAnalysis& job, const TextOptions& opt) {
  const analysis::CrossRankAnalysis& x = job.cross_rank;
  if (job.collectives.groups.empty()) return;
  Heading(out, "Cross-rank findings");
  *out += x.summary + "\n";
  if (trace.clock.applied) {
    *out += "\nclocks aligned from matched collectives (offset against rank " + std::to_string(trace.ranks[0].rank) +
            ", error bound):\n";
    for (const model::ClockOffset& o : trace.clock.ranks)
      *out += fmt::format("  rank {:<4} {:<20} {:>12} +- {}\n", o.rank, Cut(o.host, 20), FormatDuration(o.offset),
                          o.bound < 0 ? std::string("(not linked)") : FormatDuration(o.bound));
  }
  for (const std::string& n : trace.clock.notes) *out += "  clock: " + n + "\n";
  if (!x.stragglers.empty()) {
    *out += fmt::format("\n{:<6} {:>13} {:>9} {:>14} {:>16} {}\n", "rank", "arrived last", "matched",
                        "mean lateness", "others waited", "why");
    for (size_t i = 0; i < x.stragglers.size() && i < opt.max_rows; ++i) {
      const analysis::Straggler& s = x.stragglers[i];
      std::string why(analysis::LateCauseName(s.cause));
      if (!s.kernels.empty()) why += ": " + Cut(s.kernels.front(), 50);
      *out += fmt::format("{:<6} {:>13} {:>9} {:>14} {:>16} {}\n", s.rank, s.last_arrivals, s.matched,
                          FormatDuration(s.mean_lateness),
                          s.cost_per_step >= 0 ? FormatDuration(static_cast<model::TimeNs>(s.cost_per_step)) + "/step"
                                               : FormatDuration(s.cost_to_others),
                          why);
    }
    *out += "  why: compute (its kernels ran longer before those collectives), host_idle (its GPU sat\n"
            "  idle: launched late), other_collective (busy in another group's), unknown, none (noise).\n";
  }
  if (!x.steps.empty()) {
    *out += fmt::format("\n{:<8} {:>11} {:>15} {:>16} {:>16} {:>12}\n", "step", "collectives", "most often last",
                        "its cost", "all late cost", "max skew");
    for (size_t i = 0; i < x.steps.size() && i < opt.max_rows; ++i) {
      const analysis::CrossRankStep& st = x.steps[i];
      *out += fmt::format("{:<8} {:>11} {:>15} {:>16} {:>16} {:>12}\n", st.number, st.collectives,
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
    *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>12} {:>7} {:>12}  {}\n", "group", "op", "size", "alone",
                        "busbw", "overlap", "busbw", "with");
    for (const auto& c : x.contention) {
      std::string with;
      for (const auto& g : c.with_groups) with += (with.empty() ? "" : ",") + g;
      *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>12.1f} {:>7} {:>12.1f}  {}\n", Cut(c.group, 14),
                          model::CommOpName(c.op), c.size_lo < 0 ? "?" : FormatBytes(c.size_lo), c.alone_count,
                          c.alone_busbw, c.overlapped_count, c.overlapped_busbw, with);
    }
  }
  const analysis::Pipeline& p = x.pipeline;
  if (p.detected) {
    *out += fmt::format("\npipeline: {} stages, {} micro-batches per step, {}; bubble {:.1f}% (ideal {:.1f}%){}\n",
                        p.stages, p.microbatches, p.schedule, 100.0 * p.bubble_fraction, 100.0 * p.ideal_fraction,
                        p.idle_known ? "" : "; no kernel timeline: the bubble is the waiting in send/recv");
    for (const auto& s : p.per_stage)
      *out += fmt::format("  stage rank {:<4} bubble {:5.1f}%  warm-up {:>10}  steady {:>10}  cool-down {:>10}\n", s.rank,
                          100.0 * s.idle_share, FormatDuration(s.warmup_idle), FormatDuration(s.steady_idle),
                          FormatDuration(s.cooldown_idle));
  }
  if (!x.protocols.empty()) {
    *out += fmt::format("\n{:<14} {:<14} {:>10} {:<10} {:<8} {:>8} {:>7} {:>9}\n", "group", "op", "size", "algorithm",
                        "protocol", "channels", "count", "busbw");
    for (size_t i = 0; i < x.protocols.size() && i < opt.max_rows; ++i) {
      const auto& r = x.protocols[i];
      *out += fmt::format("{:<14} {:<14} {:>10} {:<10} {:<8} {:>8} {:>7} {:>9.1f}\n", Cut(r.group, 14),
                          model::CommOpName(r.op), r.size_lo < 0 ? "?" : FormatBytes(r.size_lo), r.algorithm,
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
      *out += fmt::format("{:<12} {:<14} {:<10} {:>10} {:>10} {:>9.2f} {:>9.2f} {:>9} {:>7.0f}\n", Cut(n.host, 12),
                          Cut(n.device, 14), n.kind, FormatBytes(static_cast<int64_t>(n.tx_bytes)),
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
      *out += fmt::format("{:<14} {:<14} {:>10} {:>7} {:>10} {:>10} {:>6.2f} {:>11.2f} {:>8}\n", Cut(w.group, 14),
                          model::CommOpName(w.op), w.size_lo < 0 ? "?" : FormatBytes(w.size_lo), w.count,
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
  if (!c.gpu_metrics.empty()) {
    struct Acc {
      std::string unit;
      size_t series = 0;
      uint64_t samples = 0;
      double sum = 0, min = 0, max = 0;
    };
    std::map<std::string, Acc> by_name;
    for (const analysis::GpuMetric& m : c.gpu_metrics) {
      Acc& a = by_name[m.name];
      a.unit = m.unit;
      a.min = a.series == 0 ? m.min : std::min(a.min, m.min);
      a.max = a.series == 0 ? m.max : std::max(a.max, m.max);
      a.sum += m.mean * static_cast<double>(m.samples);
      a.samples += m.samples;
      ++a.series;
    }
    *out += fmt::format("\n{:<44} {:<8} {:>7} {:>9} {:>12} {:>12} {:>12}\n", "GPU metric", "unit", "series",
                        "samples", "mean", "min", "max");
    for (const auto& [name, a] : by_name)
      *out += fmt::format("{:<44} {:<8} {:>7} {:>9} {:>12.4g} {:>12.4g} {:>12.4g}\n", Cut(name, 44), Cut(a.unit, 8),
                          a.series, a.samples, a.samples ? a.sum / static_cast<double>(a.samples) : 0.0, a.min,
                          a.max);
    *out += "  series: GPUs (and ranks) sampled; mean over all their samples.\n";
  }
}

}  // namespace

std::string AnalyzeToText(const model::Trace& trace, const JobAnalysis& job,
                          const TextOptions& options) {
  std::string out;
  Inputs(&out, trace, job);
  TimeSection(&out, job, options);
  KernelSection(&out, job, options);
  IdleSection(&out, job, options);
  CollectiveSection(&out, job, options);
  CrossRankSection(&out, trace, job, options);
  CounterSection(&out, job, options);
  return out;
}

}  // namespace commlens::report
