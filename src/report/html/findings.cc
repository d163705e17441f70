#include "report/html/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <map>

#include "model/collective.h"
#include "report/text_report.h"

namespace commlens::report::html {

namespace {

using model::TimeNs;

// Thresholds below which a rule stays quiet.
constexpr double kMinExposedPct = 3.0;
constexpr double kMinIdlePct = 5.0;
constexpr double kMinComputeImbalance = 0.05;
constexpr TimeNs kMinSkew = 50'000;
constexpr double kMaxBenchFraction = 0.6;
constexpr double kMinCollectiveShare = 0.1;
constexpr size_t kMaxNicFindings = 5;  // ports named one by one; the rest in one line

// A duration as the page writes it (text_report's FormatDuration, with the micro sign).
std::string Dur(double ns) {
  const double a = std::abs(ns);
  if (a < 1e3) return fmt::format("{:.0f} ns", ns);
  if (a < 1e6) return fmt::format("{:.1f} µs", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

// Steps the per-rank totals cover (the job's profiler steps), at least 1.
double StepCount(const analysis::JobAnalysis& job) {
  return job.steps.empty() ? 1.0 : static_cast<double>(job.steps.size());
}
const char* PerStep(const analysis::JobAnalysis& job) {
  return job.steps.empty() ? "over the trace" : "per step";
}

// One field of a step, as the page's summary shows it: the mean over the job's steps of
// their per-step means; without steps, the mean over ranks of the whole window.
template <typename F>
double StepMean(const analysis::JobAnalysis& job, F field) {
  double sum = 0;
  if (!job.steps.empty()) {
    for (const auto& s : job.steps) sum += static_cast<double>(field(s.mean));
    return sum / static_cast<double>(job.steps.size());
  }
  for (const auto& a : job.ranks) sum += static_cast<double>(field(a.time.total));
  return job.ranks.empty() ? 0 : sum / static_cast<double>(job.ranks.size());
}

// Mean over ranks of one field of the whole-window breakdown.
template <typename F>
double MeanOverRanks(const analysis::JobAnalysis& job, F field) {
  if (job.ranks.empty()) return 0;
  double sum = 0;
  for (const auto& a : job.ranks) sum += static_cast<double>(field(a.time.total));
  return sum / static_cast<double>(job.ranks.size());
}

std::string GroupName(const std::string& name, const std::string& desc) {
  return desc.empty() || desc == name ? "group " + name : desc + " (group " + name + ")";
}

// The group's description where the analysis knows one ("DP", "EP"), as GroupName writes it.
std::string GroupLabel(const analysis::JobAnalysis& job, const std::string& name) {
  for (const auto& g : job.collectives.groups)
    if (g.group_name == name) return GroupName(name, g.group_desc);
  return GroupName(name, "");
}

std::string Join(const std::vector<std::string>& items, size_t max) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

// Durations inside sentences the analysis wrote ("up to 812 us") in the page's unit sign.
std::string MicroSign(std::string text) {
  for (size_t p = 0; (p = text.find(" us", p)) != std::string::npos; p += 3) {
    const bool after_digit = p > 0 && std::isdigit(static_cast<unsigned char>(text[p - 1]));
    const bool word_ends = p + 3 == text.size() || !std::isalpha(static_cast<unsigned char>(text[p + 3]));
    if (after_digit && word_ends) text.replace(p, 3, " µs");
  }
  return text;
}

// Ranks that arrive last more often than chance (1/n of the time; the summary's test),
// with what the others wait for them per step and why they were late.
void Stragglers(const FindingsInput& in, std::vector<Finding>* out) {
  const analysis::CrossRankAnalysis& x = in.job.cross_rank;
  const size_t ranks = std::max<size_t>(in.trace.ranks.size(), 2);
  for (const analysis::Straggler& s : x.stragglers) {
    if (s.matched < 4) continue;
    const double share = static_cast<double>(s.last_arrivals) / static_cast<double>(s.matched);
    if (share < 1.5 / static_cast<double>(ranks)) continue;
    const double cost = s.cost_per_step >= 0 ? s.cost_per_step : static_cast<double>(s.cost_to_others);
    std::string text = fmt::format(
        "Rank {} arrives last at {:.0f}% of collectives ({} of {}), on average {} after the next latest; "
        "the others together wait for it {} {}.",
        s.rank, 100.0 * share, s.last_arrivals, s.matched, Dur(static_cast<double>(s.mean_lateness)), Dur(cost),
        s.cost_per_step >= 0 ? "per step" : "over the trace");
    switch (s.cause) {
      case analysis::LateCause::kCompute:
        text += " Before those collectives its compute ran longer than the others'";
        text += s.kernels.empty() ? "." : " (" + Join(s.kernels, 3) + ").";
        break;
      case analysis::LateCause::kHostIdle:
        text += " Before them its GPU sat idle while the others computed: the host launched late "
                "(CPU- or data-loading-bound).";
        break;
      case analysis::LateCause::kOtherCollective:
        text += " Before them it was busy in another process group's collectives.";
        break;
      case analysis::LateCause::kUnknown: text += " The trace does not show why (it records no kernels)."; break;
      case analysis::LateCause::kNone: break;
    }
    out->push_back({"straggler", text, "crossrank", cost});
  }
}

// A hang or desync stops the job: no per-step cost describes it, so it is listed first.
void Hangs(const FindingsInput& in, std::vector<Finding>* out) {
  for (const analysis::Hang& h : in.job.cross_rank.hangs) {
    std::string text = MicroSign(h.detail);
    if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    out->push_back({h.desync ? "desync" : "hang", text + ".", "crossrank", 0.0, true});
  }
}

// NIC ports whose error, retransmit or drop counters grew (the analysis words them). No
// cost per step: what a resend or a retrained link cost the job is not in the counters.
// The ports with the most events first; past kMaxNicFindings, one line counts the rest.
void NicErrors(const FindingsInput& in, std::vector<Finding>* out) {
  const analysis::CounterAnalysis& c = in.job.counters;
  std::vector<const analysis::NicFinding*> found;
  for (const analysis::NicFinding& f : c.findings) found.push_back(&f);
  std::stable_sort(found.begin(), found.end(), [&](const auto* a, const auto* b) {
    return c.nics[a->port].errors > c.nics[b->port].errors;
  });
  for (size_t i = 0; i < found.size() && i < kMaxNicFindings; ++i)
    out->push_back({"nic_errors", found[i]->text, "counters", 0.0});
  if (found.size() <= kMaxNicFindings) return;
  std::vector<std::string> hosts;
  for (size_t i = kMaxNicFindings; i < found.size(); ++i) hosts.push_back(c.nics[found[i]->port].host);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  out->push_back({"nic_errors",
                  fmt::format("{} more NIC ports had error, retransmit or drop counters grow, on {} {}; "
                              "commlens analyze --json lists every one under nic_findings.",
                              found.size() - kMaxNicFindings, hosts.size() == 1 ? "host" : "hosts",
                              Join(hosts, 4)),
                  "counters", 0.0});
}

// A group's collectives against themselves while another group's ran on the same rank.
// Cost: the overlapped ops' share of the bucket's time, less what it would take at the
// bandwidth they reach alone, per rank and step.
void Contention(const FindingsInput& in, std::vector<Finding>* out) {
  for (const analysis::ContentionRow& c : in.job.cross_rank.contention) {
    if (c.overlapped_count == 0 || c.alone_count == 0 || c.alone_busbw <= 0) continue;
    const double ratio = c.overlapped_busbw / c.alone_busbw;
    double lost = 0;
    std::string size;
    for (const auto& b : in.job.collectives.buckets) {
      if (b.group_name != c.group || b.op != c.op || b.size_lo != c.size_lo || b.count == 0) continue;
      if (b.size_lo >= 0) size = " of " + FormatBytes(b.size_lo) + "–" + FormatBytes(b.size_hi);
      if (ratio < 1)
        lost = static_cast<double>(b.total) * static_cast<double>(c.overlapped_count) /
               static_cast<double>(c.alone_count + c.overlapped_count) * (1 - ratio);
    }
    if (!in.job.ranks.empty()) lost /= static_cast<double>(in.job.ranks.size()) * StepCount(in.job);
    std::vector<std::string> with;
    for (const auto& g : c.with_groups) with.push_back(GroupLabel(in.job, g));
    out->push_back({"contention",
                    fmt::format("{} {}{} runs at {:.0f}% of its alone bandwidth ({:.1f} against {:.1f} GB/s) "
                                "while {} run{} ({} of {} ops overlapped).",
                                GroupLabel(in.job, c.group), model::CommOpName(c.op), size, 100.0 * ratio,
                                c.overlapped_busbw, c.alone_busbw, Join(with, 3), with.size() == 1 ? "s" : "",
                                c.overlapped_count, c.alone_count + c.overlapped_count),
                    "crossrank", lost});
  }
}

// The bubble beyond the ideal of the schedule, (p - 1) / (m + p - 1), is what a better
// balance of the stages could win back: its share of the step.
void PipelineBubble(const FindingsInput& in, std::vector<Finding>* out) {
  const analysis::Pipeline& p = in.job.cross_rank.pipeline;
  if (!p.detected) return;
  const double span = StepMean(in.job, [](const auto& b) { return b.span; });
  const double cost = std::max(0.0, p.bubble_fraction - p.ideal_fraction) * span;
  out->push_back({"pipeline_bubble",
                  fmt::format("The pipeline bubble is {:.0f}%, ideal {:.0f}% ({} stages, {} micro-batches, {}).",
                              100.0 * p.bubble_fraction, 100.0 * p.ideal_fraction, p.stages, p.microbatches,
                              p.schedule.empty() ? "schedule not recognised" : p.schedule),
                  "crossrank", cost});
}

// Evidence, no cost: how far apart the ranks' clocks were, and how well that is known.
void ClockAlignment(const FindingsInput& in, std::vector<Finding>* out) {
  const model::ClockAlignment& c = in.trace.clock;
  if (!c.applied || c.ranks.empty()) return;
  const auto top = std::max_element(c.ranks.begin(), c.ranks.end(), [](const auto& a, const auto& b) {
    return std::llabs(a.offset) < std::llabs(b.offset);
  });
  std::string text = fmt::format("The ranks' clocks were aligned from matched collectives: the largest offset is "
                                 "rank {}{} at {}",
                                 top->rank, top->host.empty() ? "" : " (host " + top->host + ")",
                                 Dur(static_cast<double>(top->offset)));
  text += top->bound >= 0 ? fmt::format(", known within ± {} ({} collectives).", Dur(static_cast<double>(top->bound)),
                                        top->samples)
                          : " (no collective linked its clock: not bounded).";
  out->push_back({"clock_alignment", text, "crossrank", 0.0});
}

void ExposedComm(const FindingsInput& in, std::vector<Finding>* out) {
  const double span = StepMean(in.job, [](const auto& b) { return b.span; });
  const double exposed = StepMean(in.job, [](const auto& b) { return b.exposed_comm; });
  const double comm = StepMean(in.job, [](const auto& b) { return b.comm; });
  const double overlap = StepMean(in.job, [](const auto& b) { return b.overlap; });
  if (span <= 0 || 100.0 * exposed / span < kMinExposedPct) return;
  out->push_back({"exposed_comm",
                  fmt::format("Communication is exposed for {} {} ({:.1f}% of the time): no compute runs "
                              "beside it. {:.0f}% of communication time is hidden behind compute.",
                              Dur(exposed), PerStep(in.job), 100.0 * exposed / span,
                              comm > 0 ? 100.0 * overlap / comm : 0.0),
                  "breakdown", exposed});
}

void Idle(const FindingsInput& in, std::vector<Finding>* out) {
  const double span = StepMean(in.job, [](const auto& b) { return b.span; });
  const double idle = StepMean(in.job, [](const auto& b) { return b.idle; });
  if (span <= 0 || 100.0 * idle / span < kMinIdlePct) return;
  std::array<double, 3> kind{};
  for (const auto& a : in.job.ranks)
    for (const auto& s : a.idle)
      for (int k = 0; k < 3; ++k) kind[k] += static_cast<double>(s.kind_time[k]);
  const double total = kind[0] + kind[1] + kind[2];
  const int top = static_cast<int>(std::max_element(kind.begin(), kind.end()) - kind.begin());
  static constexpr const char* kWhy[3] = {
      "host wait: the CPU launched the next kernel after the GPU had finished the last one",
      "kernel wait: short gaps between queued kernels (launch overhead)",
      "other: long waits with work queued (events, other streams, synchronisation)"};
  const double per_step = idle;
  std::string text = fmt::format("The GPUs are idle {} {} ({:.1f}% of the time).", Dur(per_step),
                                 PerStep(in.job), 100.0 * idle / span);
  if (total > 0)
    text += fmt::format(" Of the streams' idle time, {:.0f}% is {}.", 100.0 * kind[top] / total, kWhy[top]);
  out->push_back({"idle", text, "idle", per_step});
}

void ComputeImbalance(const FindingsInput& in, std::vector<Finding>* out) {
  if (in.job.ranks.size() < 2) return;
  const double mean = MeanOverRanks(in.job, [](const auto& b) { return b.compute; });
  const analysis::RankAnalysis* slow = nullptr;
  for (const auto& a : in.job.ranks)
    if (!slow || a.time.total.compute > slow->time.total.compute) slow = &a;
  if (mean <= 0 || static_cast<double>(slow->time.total.compute) < mean * (1 + kMinComputeImbalance)) return;
  const double steps = StepCount(in.job);
  const double extra = (static_cast<double>(slow->time.total.compute) - mean) / steps;
  out->push_back({"compute_imbalance",
                  fmt::format("Rank {} computes {:.0f}% longer than the mean rank ({} against {} {}); "
                              "the others wait for it at the next collective.",
                              slow->trace->rank, 100.0 * (static_cast<double>(slow->time.total.compute) / mean - 1),
                              Dur(static_cast<double>(slow->time.total.compute) / steps), Dur(mean / steps),
                              PerStep(in.job)),
                  "breakdown", extra});
}

void Skew(const FindingsInput& in, std::vector<Finding>* out) {
  for (const auto& g : in.job.collectives.groups) {
    if (g.matched < 2 || g.skew_p50 < kMinSkew) continue;
    // Evidence for the waits, not a cost of its own: the waiting finding counts the time.
    out->push_back({"skew",
                    fmt::format("In {}, the ranks start a collective {} apart at the median (p99 {}, "
                                "{} collectives matched).",
                                GroupName(g.group_name, g.group_desc), Dur(static_cast<double>(g.skew_p50)),
                                Dur(static_cast<double>(g.skew_p99)), g.matched),
                    "waits", 0.0});
  }
}

void BusiestCollective(const FindingsInput& in, std::vector<Finding>* out) {
  std::map<std::pair<std::string, model::CommOp>, std::pair<TimeNs, int64_t>> per_op;
  TimeNs all = 0;
  const analysis::CollectiveBucket* any = nullptr;
  for (const auto& b : in.job.collectives.buckets) {
    auto& [t, bytes] = per_op[{b.group_name, b.op}];
    t += b.total;
    bytes += b.bytes;
    all += b.total;
    any = &b;
  }
  if (!any || all <= 0 || in.job.ranks.empty()) return;
  const auto top = std::max_element(per_op.begin(), per_op.end(),
                                    [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  std::string desc;
  int size = 0;
  for (const auto& b : in.job.collectives.buckets)
    if (b.group_name == top->first.first && b.op == top->first.second) {
      desc = b.group_desc;
      size = b.group_size;
    }
  const auto [t, bytes] = top->second;
  const double per_rank_step = static_cast<double>(t) / static_cast<double>(in.job.ranks.size()) / StepCount(in.job);
  const double busbw = t > 0 ? static_cast<double>(bytes) / static_cast<double>(t) *
                                   model::BusBwFactor(top->first.second, size)
                             : 0;
  out->push_back({"busiest_collective",
                  fmt::format("{} in {} takes {:.0f}% of collective time: {} {} on each rank, at {:.1f} GB/s "
                              "bus bandwidth.",
                              model::CommOpName(top->first.second), GroupName(top->first.first, desc),
                              100.0 * static_cast<double>(t) / static_cast<double>(all), Dur(per_rank_step),
                              PerStep(in.job), busbw),
                  "collectives", 0.0});
}

void BenchGap(const FindingsInput& in, std::vector<Finding>* out) {
  TimeNs all = 0;
  for (const auto& b : in.job.collectives.buckets) all += b.total;
  if (all <= 0 || in.job.ranks.empty()) return;
  for (const auto& b : in.job.collectives.buckets) {
    if (b.count == 0 || b.bytes <= 0 || static_cast<double>(b.total) < kMinCollectiveShare * all) continue;
    const std::string op(model::CommOpName(b.op));
    for (const BenchCurve& curve : in.bench) {
      if (curve.op != op) continue;
      const double bytes = static_cast<double>(b.bytes) / static_cast<double>(b.count);
      const double peak = BenchBusBwAt(curve, bytes);
      if (peak <= 0 || b.busbw_gbps >= kMaxBenchFraction * peak) continue;
      const double lost = static_cast<double>(b.total) * (1 - b.busbw_gbps / peak) /
                          static_cast<double>(in.job.ranks.size()) / StepCount(in.job);
      out->push_back({"bench_gap",
                      fmt::format("{} of {}–{} in {} reaches {:.1f} GB/s bus bandwidth, {:.0f}% of the "
                                  "benchmark's {:.1f} GB/s at that size.",
                                  op, FormatBytes(b.size_lo), FormatBytes(b.size_hi),
                                  GroupName(b.group_name, b.group_desc), b.busbw_gbps,
                                  100.0 * b.busbw_gbps / peak, peak),
                      "collectives", lost});
      break;
    }
  }
}

using Rule = void (*)(const FindingsInput&, std::vector<Finding>*);
// Every rule, in no particular order: the findings are sorted by cost.
// Findings of equal cost keep this order (NIC errors before the evidence without a cost).
constexpr Rule kRules[] = {Stragglers, Hangs, NicErrors, Contention, PipelineBubble, ClockAlignment, ExposedComm,
                           Idle, ComputeImbalance, Skew, BenchGap, BusiestCollective};

}  // namespace

double BenchBusBwAt(const BenchCurve& curve, double bytes) {
  const auto& x = curve.size_bytes;
  const auto& y = curve.busbw_gbps;
  for (size_t i = 0; i + 1 < x.size() && i + 1 < y.size(); ++i) {
    if (bytes < static_cast<double>(x[i]) || bytes > static_cast<double>(x[i + 1]) || x[i] <= 0) continue;
    const double f = x[i + 1] > x[i] ? std::log(bytes / static_cast<double>(x[i])) /
                                           std::log(static_cast<double>(x[i + 1]) / static_cast<double>(x[i]))
                                     : 0.0;
    return y[i] + f * (y[i + 1] - y[i]);
  }
  if (x.size() == 1 && static_cast<double>(x[0]) == bytes) return y[0];
  return 0;
}

std::vector<Finding> FindFindings(const FindingsInput& in) {
  std::vector<Finding> out;
  for (Rule rule : kRules) rule(in, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.first != b.first) return a.first;
                     return a.cost_ns_per_step > b.cost_ns_per_step;
                   });
  return out;
}

}  // namespace commlens::report::html
