// Temporal breakdown and communication/compute overlap of one rank's GPU timeline.
//
// Definitions (docs/analysis.md; the same as HTA's temporal breakdown and comm-comp
// overlap, so the numbers agree on the same trace):
//   span        = end of the last GPU activity - start of the first
//   idle        = span - |union of all GPU activities|
//   compute     = |union of compute activities|
//   non_compute = span - compute - idle   (only communication, memory or sync running)
//   comm        = |union of communication activities|
//   overlap     = |union(compute) ∩ union(comm)|;  overlap_pct = overlap / comm
//   exposed_comm = comm - overlap (communication with no compute beside it)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/window.h"
#include "model/trace.h"

namespace commlens::analysis {

struct TimeBreakdown {
  model::TimeNs first_start = 0;
  model::TimeNs span = 0;
  model::TimeNs busy = 0;
  model::TimeNs idle = 0;
  model::TimeNs compute = 0;
  model::TimeNs non_compute = 0;
  model::TimeNs comm = 0;
  model::TimeNs memory = 0;
  model::TimeNs overlap = 0;
  model::TimeNs exposed_comm = 0;
  size_t activities = 0;

  double Pct(model::TimeNs t) const { return span > 0 ? 100.0 * t / span : 0.0; }
  double idle_pct() const { return Pct(idle); }
  double compute_pct() const { return Pct(compute); }
  double non_compute_pct() const { return Pct(non_compute); }
  bool has_comm() const { return comm > 0; }
  double overlap_pct() const { return comm > 0 ? 100.0 * overlap / comm : 0.0; }
};

struct StepBreakdown {
  int64_t number = 0;  // N of ProfilerStep#N
  TimeBreakdown time;
};

struct RankTimeBreakdown {
  TimeBreakdown total;
  std::vector<StepBreakdown> steps;
};

// Breakdown over the given rows of |rank.gpu|.
TimeBreakdown ComputeTimeBreakdown(const model::RankTrace& rank, const std::vector<uint32_t>& rows);

// The rows of |rank.gpu| of each of its profiler steps (|rank.steps| order): an activity
// belongs to the step whose range holds its launch; every step, in the window or not.
std::vector<std::vector<uint32_t>> RowsPerStep(const model::RankTrace& rank);

// Whole window plus one breakdown per profiler step (activities attributed by launch),
// every step of the rank, in the window or not; |per_step| is RowsPerStep(rank).
RankTimeBreakdown ComputeRankTimeBreakdown(const model::RankTrace& rank, const ActivityWindow& w,
                                           const std::vector<std::vector<uint32_t>>& per_step);

// A profiler step over the job: the mean over the ranks that ran it of each duration
// (integer ns, rounded toward zero).
struct JobStepBreakdown {
  int64_t number = 0;
  int ranks = 0;
  TimeBreakdown mean;
  std::string left_out;  // why the summary leaves it out ("warm-up", ...; step_choice.h), "" if it does not
};

// One row per step number any rank has, in step-number order.
std::vector<JobStepBreakdown> MeanStepBreakdowns(const std::vector<const RankTimeBreakdown*>& ranks);

// The step a job's summary describes (the HTML report's headline): over the steps the
// summary covers, the mean of each duration of their per-step means and their spans'
// median, least and most; for a job without steps, the same over the ranks' whole windows.
struct StepSummary {
  TimeBreakdown mean;       // integer ns, rounded toward zero; first_start unset
  bool over_steps = false;  // |count| steps; else |count| ranks
  size_t count = 0;
  model::TimeNs span_min = 0;
  model::TimeNs span_median = 0;  // the lower of the two middle ones when |count| is even
  model::TimeNs span_max = 0;
};
StepSummary SummarizeSteps(const std::vector<const TimeBreakdown*>& parts, bool over_steps);

// The step whose job-mean span is the median of every step's (the lower middle one), the
// step a report shows as typical; -1 when the job has no steps.
int64_t MedianSpanStep(const std::vector<JobStepBreakdown>& steps);

}  // namespace commlens::analysis
