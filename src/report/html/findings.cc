#include "report/html/findings.h"

#include <fmt/format.h>

#include <algorithm>
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

std::string Dur(double ns) { return FormatDuration(static_cast<TimeNs>(std::llround(ns))); }

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

void LastArrival(const FindingsInput& in, std::vector<Finding>* out) {
  const auto& c = in.job.collectives;
  uint64_t matched = 0;
  for (const auto& g : c.groups) matched += g.matched;
  if (c.ranks.size() < 2 || matched < 4) return;
  const auto last = std::max_element(c.ranks.begin(), c.ranks.end(),
                                     [](const auto& a, const auto& b) { return a.last_arrivals < b.last_arrivals; });
  const double share = static_cast<double>(last->last_arrivals) / static_cast<double>(matched);
  if (share < std::max(0.25, 1.5 / static_cast<double>(c.ranks.size()))) return;
  double others = 0;
  for (const auto& r : c.ranks)
    if (r.rank != last->rank) others += static_cast<double>(r.waiting);
  others /= static_cast<double>(c.ranks.size() - 1);
  const double per_step = others / StepCount(in.job);
  out->push_back({"last_arrival",
                  fmt::format("Rank {} arrives last at {:.0f}% of collectives ({} of {}); the other ranks "
                              "wait {} {} on average in collectives for the last rank.",
                              last->rank, 100.0 * share, last->last_arrivals, matched, Dur(per_step),
                              PerStep(in.job)),
                  "waits", per_step});
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
constexpr Rule kRules[] = {LastArrival, ExposedComm, Idle, ComputeImbalance, Skew, BenchGap, BusiestCollective};

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
                   [](const Finding& a, const Finding& b) { return a.cost_ns_per_step > b.cost_ns_per_step; });
  return out;
}

}  // namespace commlens::report::html
