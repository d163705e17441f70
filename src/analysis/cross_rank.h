// Cross-rank analyses beyond matching (docs/analysis.md, "Cross-rank"): why the late rank
// was late, hangs and desyncs, process-group contention, pipeline bubbles, and NCCL's
// algorithm and protocol per collective. All read the matched-operations table
// (model::MatchedOps) restricted to each rank's window; times are on aligned clocks when
// the loader aligned them (model::ClockAlignment).
//
// Why a rank was late: for each collective a rank joined last, the stretch before it on
// every member (from the end of the previous collective of the same group to the start
// of this one) is split into compute kernels, other groups' communication and GPU idle.
// The late rank's excess over the median of the others says what held it up: compute
// that ran longer (with the kernels that ran longer), the GPU sitting idle (the host
// launched late: CPU- or data-bound), or another collective.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/collectives.h"
#include "analysis/time_breakdown.h"
#include "model/trace.h"

namespace commlens::analysis {

enum class LateCause : uint8_t { kNone, kCompute, kHostIdle, kOtherCollective, kUnknown };
std::string_view LateCauseName(LateCause c);  // "compute", "host_idle", "other_collective", ...

struct Straggler {
  int rank = 0;
  uint64_t last_arrivals = 0;   // collectives it joined last
  uint64_t matched = 0;         // collectives it was in
  // Last arrivals expected by chance: the sum over its collectives of 1 / their members
  // (a quarter of the collectives of four ranks, half of those of two).
  double chance_arrivals = 0;
  // Last more often than chance allows (1.5 x chance_arrivals, and 3 times at least).
  bool consistent = false;
  model::TimeNs mean_lateness = 0;  // mean of (its start - the next latest start) when last
  // Wall time: how much later its late collectives began because of it (its lateness,
  // summed), and that per profiler step, each step's at most the median step (-1
  // without steps). An upper bound of what the step would gain if it were on time: a
  // delay the others would have spent waiting elsewhere is not taken off.
  model::TimeNs delay = 0;
  double delay_per_step = -1;
  // Rank-time: the others' waiting for it, summed over the waiting ranks, and that per
  // step (-1 without steps).
  model::TimeNs cost_to_others = 0;
  double cost_per_step = -1;
  // The one collective it cost the others most at (a one-off, such as a first collective
  // behind a slow start, shows here).
  model::TimeNs worst_cost = 0;
  std::string worst_group;
  int64_t worst_seq = -1;
  LateCause cause = LateCause::kNone;
  // Excess over the others' median in the stretches before its late collectives.
  model::TimeNs excess_compute = 0, excess_idle = 0, excess_other_comm = 0;
  // Each part's share of the positive excess (compute, host_idle, other_collective);
  // |mixed| when the largest holds under 70% of it: no one cause explains the lateness.
  double cause_share[3] = {0, 0, 0};
  bool mixed = false;
  std::vector<std::string> kernels;  // kernels that ran longer than on the others (cause compute)
};

// The steps a finding is measured against: how many, their median length, and how much
// they vary from one to the next (1.4826 x the median absolute deviation, an estimate of
// the standard deviation that one odd step does not move; with fewer than 4 steps, none),
// and never under 1% of the median step. A cost below |noise| is not told apart from the
// job's own variation. Without steps, |median| is the mean rank's window and |noise| 1%
// of it.
struct StepNoise {
  size_t steps = 0;
  model::TimeNs median = 0;
  model::TimeNs noise = 0;
};

// A rank that stopped short of a collective the others reached, or ran another op there.
struct Hang {
  std::string group;
  int64_t seq = 0;
  std::string op;                 // what the ranks that reached it ran
  std::vector<int> reached;       // ranks that ran it
  std::vector<int> missing;       // ranks that never did (their last op in the group is earlier)
  bool desync = false;            // reached by all, but as different ops
  model::TimeNs waited = 0;       // the longest time a rank that reached it sat in it
  // Per missing rank: what it was doing when the others started it ("rank 1 was in
  // "load_batch" (...)"), from its host ranges; empty when its trace has none.
  std::vector<std::string> missing_doing;
  std::string detail;             // one plain sentence
};

// Per-op bus bandwidths from the transfer time (arrivals.h), summarized: how many, and
// their quartiles. Fewer than kMinSamples say nothing: no number is shown.
struct BandwidthSpread {
  static constexpr uint64_t kMinSamples = 5;
  uint64_t count = 0;
  double p25 = 0, median = 0, p75 = 0;  // GB/s
  bool enough() const { return count >= kMinSamples; }
};

// One (group, op, size bucket): bandwidth while moving data alone against while another
// group's collective moved data on the same rank (their transfer intervals overlap).
struct ContentionRow {
  std::string group;
  model::CommOp op = model::CommOp::kUnknown;
  int64_t size_lo = -1;
  BandwidthSpread alone, overlapped;
  uint64_t unknown = 0;  // ops whose transfer time is unknown: left out of both
  std::vector<std::string> with_groups;
};

// A stage's bubble in one step (or, without profiler steps, one pipeline iteration).
struct PipelineStep {
  int64_t step = -1;  // N of ProfilerStep#N; the iteration's index without steps
  model::TimeNs length = 0;
  model::TimeNs warmup_idle = 0, steady_idle = 0, cooldown_idle = 0;
  model::TimeNs compute = 0;  // compute kernel time in the step (0 without a kernel timeline)
  double share() const {
    return length > 0 ? static_cast<double>(warmup_idle + steady_idle + cooldown_idle) / static_cast<double>(length) : 0;
  }
};

struct PipelineStage {
  int rank = 0;
  int stage = 0;    // position in its pipeline, 0 first
  int replica = 0;  // which pipeline (data-parallel replica), by lowest rank
  double idle_share = 0;  // bubble share of its step time, the median over steps
  model::TimeNs compute = 0;  // compute per step, the median over steps
  // The bubble the schedule leaves this stage when compute is all the step costs: the
  // slowest stage's m v chunks back to back, the others' filling and draining the pipe
  // once, 1 - C / (C_max + (sum C - C_max) / (m v)). The ideal when the stages are
  // balanced; what is left above it is communication, launches and waits the schedule
  // does not explain. -1 when unknown (no compute timeline, m unknown).
  double paced_ideal = -1;
  model::TimeNs warmup_idle = 0, steady_idle = 0, cooldown_idle = 0;  // summed over steps
  std::vector<PipelineStep> steps;
};

struct Pipeline {
  bool detected = false;
  int stages = 0;             // ranks per pipeline
  int virtual_stages = 1;     // model chunks per rank (interleaved schedules), 0 if unknown
  int microbatches = 0;       // per step (0 if unknown)
  int replicas = 0;           // pipelines measured (data-parallel replicas)
  std::string schedule;       // "1F1B", "GPipe (all forward, then all backward)",
                              // "interleaved 1F1B with 2 model chunks per rank", ...
  std::string schedule_rule;  // how m, v and the schedule were found, and the steps counted
  double bubble_fraction = 0;  // mean idle share of the stages' steps, over every replica
  double ideal_fraction = 0;   // (p - 1) / (m + p - 1), divided by v when interleaved
  std::vector<double> replica_bubble;  // each replica's mean stage bubble
  double replica_spread = 0;           // the largest minus the smallest of those
  int pace_stage = -1;                 // the stage whose compute sets the pace, -1: balanced
  model::TimeNs pace_compute = 0, median_compute = 0;  // its compute per step, the median stage's
  std::vector<PipelineStage> per_stage;  // by replica, then stage
  // False when some stage has no kernel timeline (recordings): its bubble is then only
  // the time it waited in send/recv for the peer, a lower bound.
  bool idle_known = true;
};

// NCCL's choice per (group, op, size bucket), where the source records it.
struct ProtocolRow {
  std::string group;
  model::CommOp op = model::CommOp::kUnknown;
  int64_t size_lo = -1;
  std::string algorithm, protocol;
  int channels = -1;
  uint64_t count = 0;
  double busbw = 0;  // the bucket's busbw over the transfer time (0: unknown)
};

// One profiler step across the ranks: its collectives (complete ones, in the windows),
// who arrived last most often in it and what the late arrivals cost the others. A
// collective belongs to the step in which its first member launched it.
struct CrossRankStep {
  int64_t number = 0;   // N of ProfilerStep#N
  uint64_t collectives = 0;
  int most_last_rank = -1;        // the rank last at the most of its collectives
  uint64_t most_last_count = 0;
  model::TimeNs cost_to_others = 0;  // all late arrivals of the step, summed
  model::TimeNs most_last_cost = 0;  // of which the most frequent last rank's
  model::TimeNs max_skew = 0;        // the largest start spread of one of its collectives
};

struct CrossRankAnalysis {
  std::string summary;  // one plain sentence: who is late, how often, what it costs
  StepNoise noise;      // what the summary held the costs against
  std::vector<CrossRankStep> steps;   // per profiler step, where the traces have steps
  std::vector<Straggler> stragglers;  // ranks that arrived last at least once, longest delay first
  std::vector<Hang> hangs;
  model::TimeNs contended_time = 0;   // time with two groups' collectives at once, summed over ranks
  std::vector<ContentionRow> contention;
  Pipeline pipeline;
  std::vector<ProtocolRow> protocols;
};

// What rank |r| was doing at |t|: the innermost host range (annotation, else host event)
// open then, or else its last range before |t|, in words ("was in \"aten::mm\" (from ...
// before it to ... after)"). Empty when the trace has none.
std::string DoingAt(const model::RankTrace& r, model::TimeNs t);

// DoingAt for a rank whose host events were dropped after import
// (RankTrace::host_events_dropped): asked with the rank's index in Trace::ranks and a time
// on the job's clock, it answers from the rank's whole model, read again from its file
// (distributed/host_lookup.h). Empty function: such ranks say nothing of what they did.
using DoingAtLookup = std::function<std::string(size_t rank_index, model::TimeNs t)>;

class StretchSource;

// |in_window[r][op]|: the op of rank r is in its window (collectives.h OpsInWindow), and
// |arrivals| computed over it. |gpu|: where the ranks' GPU stretches are measured
// (gpu_stretch.h).
CrossRankAnalysis AnalyzeCrossRank(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                                   const Arrivals& arrivals, const std::vector<const RankTimeBreakdown*>& times,
                                   const StepNoise& noise, const CollectiveAnalysis& collectives, StretchSource& gpu,
                                   const DoingAtLookup& doing_at = {});

// The noise of the job's steps (|steps|: the per-step means over ranks of the steps the
// summary covers), or, without steps, of the ranks' windows.
StepNoise MeasureStepNoise(const std::vector<JobStepBreakdown>& steps, const std::vector<const RankTimeBreakdown*>& times);

}  // namespace commlens::analysis
