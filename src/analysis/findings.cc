#include "analysis/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <map>
#include <tuple>

#include "analysis/analyze.h"
#include "analysis/collectives.h"
#include "common/strings.h"
#include "common/units.h"
#include "model/bus_bandwidth.h"
#include "model/collective.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

struct FindingsInput {
  const model::Trace& trace;
  const JobAnalysis& job;
};

// Thresholds below which a rule stays quiet.
constexpr double kMinExposedPct = 3.0;
constexpr double kMinIdlePct = 5.0;
constexpr double kMinComputeImbalance = 0.05;
constexpr TimeNs kMinSkew = 50'000;
constexpr double kMaxBenchFraction = 0.6;
constexpr double kMinCollectiveShare = 0.1;
constexpr double kMostlyWaiting = 0.5;  // a bucket whose kernel time is at least half waiting
constexpr size_t kMaxNicFindings = 5;  // ports named one by one; the rest in one line

std::string Dur(double ns) { return FormatDuration(static_cast<int64_t>(ns)); }

// Steps the per-rank totals cover (the job's summarized steps), at least 1.
double StepCount(const JobAnalysis& job) {
  const size_t n = job.SummarizedSteps().size();
  return n == 0 ? 1.0 : static_cast<double>(n);
}
const char* PerStep(const JobAnalysis& job) {
  return job.SummarizedSteps().empty() ? "over the trace" : "per step";
}

// One field of a step, as the summary shows it: the mean over the summarized steps of
// their per-step means; without steps, the mean over ranks of the whole window.
template <typename F>
double StepMean(const JobAnalysis& job, F field) {
  double sum = 0;
  const std::vector<const JobStepBreakdown*> steps = job.SummarizedSteps();
  if (!steps.empty()) {
    for (const JobStepBreakdown* s : steps) sum += static_cast<double>(field(s->mean));
    return sum / static_cast<double>(steps.size());
  }
  for (const auto& a : job.ranks) sum += static_cast<double>(field(a.time.total));
  return job.ranks.empty() ? 0 : sum / static_cast<double>(job.ranks.size());
}

// Mean over ranks of one field of the whole-window breakdown.
template <typename F>
double MeanOverRanks(const JobAnalysis& job, F field) {
  if (job.ranks.empty()) return 0;
  double sum = 0;
  for (const auto& a : job.ranks) sum += static_cast<double>(field(a.time.total));
  return sum / static_cast<double>(job.ranks.size());
}

std::string GroupName(const std::string& name, const std::string& desc) {
  return desc.empty() || desc == name ? "group " + name : desc + " (group " + name + ")";
}

// The group's description where the analysis knows one ("DP", "EP"), as GroupName writes it.
std::string GroupLabel(const JobAnalysis& job, const std::string& name) {
  for (const auto& g : job.collectives.groups)
    if (g.group_name == name) return GroupName(name, g.group_desc);
  return GroupName(name, "");
}

// "2, 3" or "4-63" or "0, 2, 5-7", cut after 60 characters.
std::string RankList(const std::vector<int>& sorted) { return NumberRanges(sorted, 60); }

std::string Join(const std::vector<std::string>& items, size_t max) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

// The rank the summary names (the longest delay, consistently late, above the steps'
// noise), in the summary's words: the finding is the verdict. Cost: its delay, wall time.
void Stragglers(const FindingsInput& in, std::vector<Finding>* out) {
  const CrossRankAnalysis& x = in.job.cross_rank;
  if (x.stragglers.empty()) return;
  const Straggler& s = x.stragglers.front();
  const double delay = s.delay_per_step >= 0 ? s.delay_per_step : static_cast<double>(s.delay);
  if (!s.consistent || delay < static_cast<double>(x.noise.noise)) return;
  out->push_back({"straggler", x.summary, "crossrank", delay});
}

// Ranks the world size has and the inputs lack: every cross-rank figure covers the others
// only (a missing rank's late arrivals are not seen). Listed first, with no cost.
void PartialJob(const FindingsInput& in, std::vector<Finding>* out) {
  const model::Trace& t = in.trace;
  if (t.missing_ranks.empty()) return;
  out->push_back({"partial_job",
                  fmt::format("The job is partial: {} of its {} ranks have no trace here (rank{} {}); the cross-rank "
                              "findings cover the {} present, and the collectives they share with a missing rank have "
                              "no transfer time.",
                              t.missing_count, t.world_size, t.missing_count == 1 ? "" : "s",
                              RankList(t.missing_ranks), t.ranks.size()),
                  "inputs", 0.0, true});
}

// A hang or desync stops the job: no per-step cost describes it, so it is listed first.
void Hangs(const FindingsInput& in, std::vector<Finding>* out) {
  for (const Hang& h : in.job.cross_rank.hangs) {
    std::string text = h.detail;
    if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    out->push_back({h.desync ? "desync" : "hang", text + ".", "crossrank", 0.0, true});
  }
}

// NIC ports whose error, retransmit or drop counters grew (the analysis words them). No
// cost per step: what a resend or a retrained link cost the job is not in the counters.
// The ports with the most events first; past kMaxNicFindings, one line counts the rest.
void NicErrors(const FindingsInput& in, std::vector<Finding>* out) {
  const CounterAnalysis& c = in.job.counters;
  std::vector<const NicFinding*> found;
  for (const NicFinding& f : c.findings) found.push_back(&f);
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

// A contention row that says its group's collectives move data slower beside another
// group's: both sides with enough samples, and the overlapped median below the alone
// quartile (slower beyond the alone ops' own spread).
bool SlowedBeside(const ContentionRow& c) {
  return c.alone.enough() && c.overlapped.enough() && c.overlapped.median < c.alone.p25 && c.alone.median > 0;
}

// The collectives table's bucket of a contention row, or nullptr.
const CollectiveBucket* BucketOf(const FindingsInput& in, const ContentionRow& c) {
  for (const CollectiveBucket& b : in.job.collectives.buckets)
    if (b.group_name == c.group && b.op == c.op && b.size_lo == c.size_lo && b.count > 0) return &b;
  return nullptr;
}

// "dp (group 2) all_reduce of 64 MiB-128 MiB, which moves data at 70% of its alone
// bandwidth while ep (group 1) moves data on the same rank", as the contention finding
// and the replay's say it (|which|: ", which" or "").
std::string SlowedText(const FindingsInput& in, const ContentionRow& c, const char* which) {
  const CollectiveBucket* b = BucketOf(in, c);
  std::vector<std::string> with;
  for (const auto& g : c.with_groups) with.push_back(GroupLabel(in.job, g));
  return fmt::format("{} {}{}{} moves data at {:.0f}% of its alone bandwidth while {} move{} data on the same rank",
                     GroupLabel(in.job, c.group), model::CommOpName(c.op),
                     b != nullptr && b->size_lo >= 0 ? " of " + FormatBytes(b->size_lo) + "-" + FormatBytes(b->size_hi) : "",
                     which, 100.0 * c.overlapped.median / c.alone.median, Join(with, 3), with.size() == 1 ? "s" : "");
}

// A group's collectives moving data while another group's moved data on the same rank,
// against those that moved alone (SlowedBeside). Cost: the overlapped ops' share of the
// bucket's transfer time, less what it would take at the alone median, per rank and step.
void Contention(const FindingsInput& in, std::vector<Finding>* out) {
  for (const ContentionRow& c : in.job.cross_rank.contention) {
    if (!SlowedBeside(c)) continue;
    const double ratio = c.overlapped.median / c.alone.median;
    double lost = 0;
    if (const CollectiveBucket* b = BucketOf(in, c))
      lost = static_cast<double>(b->transfer) * static_cast<double>(c.overlapped.count) /
             static_cast<double>(c.alone.count + c.overlapped.count) * (1 / ratio - 1) * ratio;
    if (!in.job.ranks.empty()) lost /= static_cast<double>(in.job.ranks.size()) * StepCount(in.job);
    out->push_back({"contention",
                    fmt::format("{} (busbw over the transfer time, median {:.1f} against {:.1f} GB/s; {} overlapped, {} "
                                "alone); about {} per rank and step lost.",
                                SlowedText(in, c, ""), c.overlapped.median, c.alone.median, c.overlapped.count,
                                c.alone.count, Dur(lost)),
                    "crossrank", lost});
  }
}

// The bubble beyond the ideal of the schedule, (p - 1) / (m + p - 1), is what a better
// balance of the stages could win back: its share of the step.
void PipelineBubble(const FindingsInput& in, std::vector<Finding>* out) {
  const Pipeline& p = in.job.cross_rank.pipeline;
  if (!p.detected) return;
  const double span = StepMean(in.job, [](const auto& b) { return b.span; });
  const double cost = std::max(0.0, p.bubble_fraction - p.ideal_fraction) * span;
  out->push_back({"pipeline_bubble",
                  fmt::format("The pipeline bubble is {:.0f}%, ideal {:.0f}% ({} stages{}, {} micro-batches, {}).",
                              100.0 * p.bubble_fraction, 100.0 * p.ideal_fraction, p.stages,
                              p.replicas > 1 ? fmt::format(" x {} replicas", p.replicas) : "",
                              p.microbatches > 0 ? std::to_string(p.microbatches) : "?",
                              p.schedule.empty() ? "schedule not recognised" : p.schedule),
                  "crossrank", cost});
  // The slowest stage stretches every other stage's bubble: its compute beyond the
  // median stage's, per step, is what a better partition wins back at most.
  if (p.pace_stage >= 0) {
    const double extra = static_cast<double>(p.pace_compute - p.median_compute);
    out->push_back({"pipeline_pace",
                    fmt::format("Stage {} sets the pipeline's pace: {} of compute per step, {:.1f}x the median stage's "
                                "{}; the other stages wait for it. Moving layers off it (a balanced partition) wins up "
                                "to {} per step.",
                                p.pace_stage, Dur(p.pace_compute),
                                static_cast<double>(p.pace_compute) / static_cast<double>(std::max<TimeNs>(1, p.median_compute)),
                                Dur(p.median_compute), Dur(static_cast<TimeNs>(extra))),
                    "crossrank", extra});
  }
  // Replicas of one pipeline that differ: the slowest replica holds back the data-parallel
  // reduction that ends the step.
  if (p.replicas > 1 && p.replica_spread > 0.05) {
    const auto [lo, hi] = std::minmax_element(p.replica_bubble.begin(), p.replica_bubble.end());
    out->push_back({"pipeline_replicas",
                    fmt::format("The {} pipeline replicas differ: bubble {:.0f}% in replica {} against {:.0f}% in "
                                "replica {} ({:.0f} points apart).",
                                p.replicas, 100.0 * *hi, hi - p.replica_bubble.begin(), 100.0 * *lo,
                                lo - p.replica_bubble.begin(), 100.0 * p.replica_spread),
                    "crossrank", p.replica_spread * span});
  }
}

// Where the replay blames a collective's kernel whose time is mostly that of collectives
// moving data slower beside another group's (the contention finding's test: NCCL's kernel
// names are shared by every group and size, so the kernel's time in the slowed rows must
// be at least half of its time), the kernel is the victim: what to change is the traffic
// the groups share. The sentence that says so, or "".
std::string ContentionBehind(const FindingsInput& in, const ReplayVerdict::Part& part) {
  if (part.kind != "op") return "";
  using Key = std::tuple<std::string, model::CommOp, int64_t>;  // (group, op, size bucket)
  std::map<Key, double> time;  // the kernel's time per key
  double total = 0;
  for (const model::RankTrace& r : in.trace.ranks) {
    bool known = false;
    const model::StringId name = r.strings.Find(part.value, &known);
    if (!known) continue;
    for (size_t a = 0; a < r.gpu.size(); ++a) {
      if (r.gpu.name[a] != name) continue;
      const double t = static_cast<double>(std::max<TimeNs>(0, r.gpu.end[a] - r.gpu.start[a]));
      total += t;
      const uint32_t c = r.gpu.comm[a];
      if (c == model::kNoIndex || r.comms.group[c] == model::kNoIndex) continue;
      const uint32_t job_group = r.groups[r.comms.group[c]].job_group;
      if (job_group < in.trace.groups.size())
        time[{in.trace.groups[job_group].name, r.comms.op[c], SizeBucket(r.comms.bytes[c]).first}] += t;
    }
  }
  const ContentionRow* worst = nullptr;  // the slowed row that holds most of the kernel's time
  double slowed = 0, worst_time = 0;
  for (const ContentionRow& c : in.job.cross_rank.contention) {
    const auto it = time.find({c.group, c.op, c.size_lo});
    if (!SlowedBeside(c) || it == time.end()) continue;
    slowed += it->second;
    if (it->second > worst_time) worst = &c, worst_time = it->second;
  }
  if (worst == nullptr || 2 * slowed < total) return "";
  return " Most of its time is " + SlowedText(in, *worst, ", which") +
         " (see the contention finding): the kernel is the victim, and keeping the groups' traffic apart is the fix "
         "to try.";
}

// What the what-if replay blames: the part whose typical speed would shorten the step
// most (the delays it causes propagate through the dependencies: the first rank seen
// waiting is often a victim). The verdict: listed first (after a hang), the per-collective
// lateness below it as evidence. Cost: the predicted gain per step.
void Replay(const FindingsInput& in, std::vector<Finding>* out) {
  const ReplayVerdict& r = in.job.replay;
  // A hung job's steps are not the job's: the hang is the verdict.
  if (!r.done || r.slowdown < kAttributed || r.parts.empty() || !in.job.cross_rank.hangs.empty()) return;
  const ReplayVerdict::Part& top = r.parts.front();
  if (top.gain < 0.03) return;
  std::string others;
  for (size_t i = 1; i < r.parts.size() && i < 3; ++i)
    if (r.parts[i].gain >= 0.03)
      others += fmt::format("{}{} {:.0f}%", others.empty() ? "; then " : ", ", r.parts[i].label(), 100.0 * r.parts[i].gain);
  // Where the GPUs wait for the host most of the step (host work, a collective on the
  // host such as gloo's), the replay's parts shorten only the GPUs' share: the verdict is
  // not the step's, and its cost is what it saves, not its share of the measured step.
  const bool gpus_set_the_step = 2 * r.no_delay_step >= r.step;
  std::string waits;
  if (!gpus_set_the_step)
    waits = fmt::format(" The GPUs' own work is only {} of the {} measured step: the rest is the GPUs waiting for "
                        "the host (launch delays), which this does not shorten.",
                        Dur(r.no_delay_step), Dur(r.step));
  out->push_back({"replay",
                  fmt::format("Replaying the steps (commlens whatif), {} is where the time goes: at its typical speed "
                              "the GPUs' step would take {} instead of {} per step ({:.0f}% shorter; launch delays left "
                              "out, the measured step is {} on average over the {} replayed steps){}. The job runs "
                              "{:.2f}x its ideal (every kernel at its typical duration); the replay gives back the "
                              "measured steps within {:.1f}%.{}{}",
                              top.label(), Dur(top.step), Dur(r.no_delay_step), 100.0 * top.gain, Dur(r.step),
                              r.steps.size(), others, r.slowdown, 100.0 * r.replay_error, ContentionBehind(in, top),
                              waits),
                  "crossrank", static_cast<double>(r.no_delay_step - top.step), gpus_set_the_step});
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
  text += top->bound >= 0 ? fmt::format(", known within +-{} ({} collectives).", Dur(static_cast<double>(top->bound)),
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
  std::string text = fmt::format("Communication is exposed for {} {} ({:.1f}% of the time): no compute runs "
                                 "beside it. {:.0f}% of communication time is hidden behind compute.",
                                 Dur(exposed), PerStep(in.job), 100.0 * exposed / span,
                                 comm > 0 ? 100.0 * overlap / comm : 0.0);
  // By parallelism role, where some group's role is known.
  const ParallelRoles& roles = in.job.roles;
  std::string by_role;
  bool named = false;
  for (ParallelRole r : roles.Present()) {
    named = named || r != ParallelRole::kUnknown;
    const model::TimeNs t = roles.summary.exposed[static_cast<size_t>(r)];
    if (t > 0) by_role += fmt::format("{}{} {:.1f}%", by_role.empty() ? "" : ", ", RoleShort(r), roles.summary.ExposedPct(r));
  }
  if (roles.has_kernels && named && !by_role.empty())
    text += " Of that, by parallelism: " + by_role + (in.job.summary.over_steps ? " of the step." : " of the time.");
  out->push_back({"exposed_comm", text, "breakdown", exposed});
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
      "host wait (the CPU launched the next kernel after the stream had finished the last one)",
      "kernel wait (short gaps between queued kernels: launch overhead)",
      "other (long waits with work queued: events, other streams, synchronisation)"};
  const double per_step = idle;
  std::string text = fmt::format("The GPUs are idle {} {} ({:.1f}% of the time, no kernel on any stream; mean rank).",
                                 Dur(per_step), PerStep(in.job), 100.0 * idle / span);
  // Gaps are measured per stream (a stream waits while another may run): their kinds say
  // why streams wait, summed over streams, not how the GPU's idle time splits.
  if (total > 0)
    text += fmt::format(" Of the gaps between kernels of one stream (summed over streams), {:.0f}% of the time is {}.",
                        100.0 * kind[top] / total, kWhy[top]);
  out->push_back({"idle", text, "idle", per_step});
}

// A rank that computes longer than the mean rank, only when the cross-rank table shows
// the others waiting for it (it arrives last at its collectives beyond chance): extra
// compute that is hidden behind others' waits or overlapped costs nothing.
void ComputeImbalance(const FindingsInput& in, std::vector<Finding>* out) {
  if (in.job.ranks.size() < 2) return;
  const double mean = MeanOverRanks(in.job, [](const auto& b) { return b.compute; });
  const RankAnalysis* slow = nullptr;
  for (const auto& a : in.job.ranks)
    if (!slow || a.time.total.compute > slow->time.total.compute) slow = &a;
  if (mean <= 0 || static_cast<double>(slow->time.total.compute) < mean * (1 + kMinComputeImbalance)) return;
  const Straggler* late = nullptr;
  for (const Straggler& s : in.job.cross_rank.stragglers)
    if (s.rank == slow->trace->rank && s.consistent) late = &s;
  if (late == nullptr) return;
  const double steps = StepCount(in.job);
  const double extra = (static_cast<double>(slow->time.total.compute) - mean) / steps;
  out->push_back({"compute_imbalance",
                  fmt::format("Rank {} computes {:.0f}% longer than the mean rank ({} against {} {}) and arrives "
                              "last at {} of its {} collectives: the others wait for it.",
                              slow->trace->rank, 100.0 * (static_cast<double>(slow->time.total.compute) / mean - 1),
                              Dur(static_cast<double>(slow->time.total.compute) / steps), Dur(mean / steps),
                              PerStep(in.job), late->last_arrivals, late->matched),
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

// The op that takes the most collective time, with the bandwidth it reaches while moving
// data. Evidence, no cost of its own.
void BusiestCollective(const FindingsInput& in, std::vector<Finding>* out) {
  struct Acc {
    TimeNs total = 0, transfer = 0;
    int64_t transfer_bytes = 0;
    std::string desc;
    int size = 0;
  };
  std::map<std::pair<std::string, model::CommOp>, Acc> per_op;
  TimeNs all = 0;
  for (const auto& b : in.job.collectives.buckets) {
    Acc& a = per_op[{b.group_name, b.op}];
    a.total += b.total;
    a.transfer += b.transfer;
    a.transfer_bytes += b.transfer_bytes;
    a.desc = b.group_desc;
    a.size = b.group_size;
    all += b.total;
  }
  if (per_op.empty() || all <= 0 || in.job.ranks.empty()) return;
  const auto top = std::max_element(per_op.begin(), per_op.end(),
                                    [](const auto& a, const auto& b) { return a.second.total < b.second.total; });
  const Acc& a = top->second;
  const double per_rank_step = static_cast<double>(a.total) / static_cast<double>(in.job.ranks.size()) / StepCount(in.job);
  std::string text = fmt::format("{} in {} takes {:.0f}% of collective time: {} {} on each rank (kernel time)",
                                 model::CommOpName(top->first.second), GroupName(top->first.first, a.desc),
                                 100.0 * static_cast<double>(a.total) / static_cast<double>(all), Dur(per_rank_step),
                                 PerStep(in.job));
  if (a.transfer > 0 && a.transfer_bytes > 0)
    text += fmt::format("; moving data it reaches {:.1f} GB/s bus bandwidth",
                        static_cast<double>(a.transfer_bytes) / static_cast<double>(a.transfer) *
                            model::BusBwFactor(top->first.second, a.size));
  out->push_back({"busiest_collective", text + ".", "collectives", 0.0});
}

// Measured while moving data, a bucket far below what the benchmark measured at its size:
// the fabric (or NCCL's choice) is slow there. Cost: the transfer time beyond what the
// benchmark's bandwidth would take, per rank and step.
void BenchGap(const FindingsInput& in, std::vector<Finding>* out) {
  TimeNs all = 0;
  for (const auto& b : in.job.collectives.buckets) all += b.total;
  if (all <= 0 || in.job.ranks.empty()) return;
  for (const auto& b : in.job.collectives.buckets) {
    if (b.bench_busbw_gbps <= 0 || b.transfer <= 0 || static_cast<double>(b.total) < kMinCollectiveShare * all) continue;
    const double ratio = b.transfer_busbw_gbps / b.bench_busbw_gbps;
    if (ratio >= kMaxBenchFraction) continue;
    const double lost = static_cast<double>(b.transfer) * (1 - ratio) / static_cast<double>(in.job.ranks.size()) /
                        StepCount(in.job);
    out->push_back({"bench_gap",
                    fmt::format("{} of {}-{} in {} moves data at {:.1f} GB/s bus bandwidth (over the transfer time, "
                                "after the last rank arrived), {:.0f}% of the benchmark's {:.1f} GB/s at that size; "
                                "about {} per rank and step lost.",
                                BucketOpName(b), FormatBytes(b.size_lo), FormatBytes(b.size_hi),
                                GroupName(b.group_name, b.group_desc), b.transfer_busbw_gbps, 100.0 * ratio,
                                b.bench_busbw_gbps, Dur(lost)),
                    "collectives", lost});
  }
}

// A bucket whose kernel time is mostly waiting for the last rank: its kernel-time
// bandwidth would blame the fabric, which (moving data) does well. Cost: what the mean
// rank waits in it per step. Buckets of small messages (barriers, start-up handshakes)
// have no bandwidth to blame: their waiting is another finding's (the straggler's, the
// pipeline's bubble), not this one. So is a pipeline's sends and receives': a stage waits
// in them for the other stages' compute, which is the bubble the pipeline finding measures.
void WaitingNotNetwork(const FindingsInput& in, std::vector<Finding>* out) {
  TimeNs all = 0;
  for (const auto& b : in.job.collectives.buckets) all += b.total;
  if (all <= 0 || in.job.ranks.empty()) return;
  for (const auto& b : in.job.collectives.buckets) {
    const double wait = b.wait_share();
    if (wait < kMostlyWaiting || static_cast<double>(b.total) < kMinCollectiveShare * all || b.transfer <= 0) continue;
    if (b.size_lo >= 0 && b.size_hi <= kSmallMessageBytes) continue;
    if (in.job.cross_rank.pipeline.detected && model::IsPointToPoint(b.op)) continue;
    const double waiting = static_cast<double>(b.transfer_kernel - b.transfer) *
                           static_cast<double>(b.count - b.untimed) / static_cast<double>(b.transfer_count) /
                           static_cast<double>(in.job.ranks.size()) / StepCount(in.job);
    std::string text = fmt::format(
        "{} of {}-{} in {} spends {:.0f}% of its kernel time waiting for the last rank to arrive{}; moving data it "
        "reaches {:.1f} GB/s bus bandwidth",
        BucketOpName(b), b.size_lo < 0 ? "?" : FormatBytes(b.size_lo), b.size_lo < 0 ? "?" : FormatBytes(b.size_hi),
        GroupName(b.group_name, b.group_desc), 100.0 * wait,
        b.waited_for_rank >= 0 ? fmt::format(" (most of it for rank {})", b.waited_for_rank) : "", b.transfer_busbw_gbps);
    if (b.bench_busbw_gbps > 0)
      text += fmt::format(" ({:.0f}% of the benchmark's {:.1f} GB/s at that size)",
                          100.0 * b.transfer_busbw_gbps / b.bench_busbw_gbps, b.bench_busbw_gbps);
    text += fmt::format(" against {:.1f} GB/s over the kernel time. The network is not the bottleneck here: the ranks "
                        "wait for each other, the mean rank {} {} in it.",
                        b.kernel_busbw_gbps, Dur(waiting), PerStep(in.job));
    out->push_back({"waiting_not_network", text, "collectives", waiting});
  }
}

using Rule = void (*)(const FindingsInput&, std::vector<Finding>*);
// Every rule, in no particular order: the findings are sorted by cost.
// Findings of equal cost keep this order (NIC errors before the evidence without a cost).
constexpr Rule kRules[] = {PartialJob, Hangs, Replay, Stragglers, NicErrors, Contention, PipelineBubble, ClockAlignment, ExposedComm,
                           Idle, ComputeImbalance, Skew, WaitingNotNetwork, BenchGap, BusiestCollective};

}  // namespace

std::vector<Finding> FindFindings(const model::Trace& trace, const JobAnalysis& job) {
  std::vector<Finding> out;
  const FindingsInput in{trace, job};
  for (Rule rule : kRules) rule(in, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.first != b.first) return a.first;
                     return a.cost_ns_per_step > b.cost_ns_per_step;
                   });
  return out;
}

}  // namespace commlens::analysis
