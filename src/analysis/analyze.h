// Runs every analysis over a loaded trace: the per-rank analyses as a parallel map, the
// cross-rank ones as a reduce over their small results.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/collectives.h"
#include "analysis/cross_rank.h"
#include "analysis/findings.h"
#include "analysis/group_comm.h"
#include "analysis/idle_gaps.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/nic_analysis.h"
#include "analysis/parallel_roles.h"
#include "analysis/step_choice.h"
#include "analysis/stretch_questions.h"
#include "analysis/time_breakdown.h"
#include "analysis/window.h"
#include "common/strings.h"
#include "model/trace.h"

namespace commlens::analysis {

struct AnalyzeOptions {
  WindowOptions window;
  // The what-if replay behind the straggler verdict (whatif.h): on by default for jobs of
  // up to kReplayMaxRanks ranks in one process; --mpi does not replay (the GPU tables stay
  // with the processes that imported them).
  bool replay = true;
  // The steps the summary covers (step_choice.h); unset, Analyze applies the warm-up rule.
  // The per-rank analyses cut their window to it (WindowFor).
  std::optional<StepChoice> steps;
  IdleOptions idle;
  size_t top_kernels = 10;
  int threads = 0;  // 0: one per hardware thread
  // The fabric's yardstick (commlens bench --json): each collective bucket's transfer
  // bandwidth is held against it.
  std::vector<BenchCurve> bench;
  // What a rank whose host events were dropped was doing when a hang left it behind
  // (cross_rank.h); analyze sets it, exports keep every host event and need none.
  DoingAtLookup doing_at;
};

// The what-if replay's verdict (whatif.h): the parts whose typical speed would shorten the
// step most, with the predicted step time.
struct ReplayVerdict {
  bool done = false;
  std::string why_not;
  double slowdown = 0;      // S: no-delay step over ideal step
  double replay_error = 0;  // the model's own error on the measured steps
  model::TimeNs step = 0;   // the replayed (measured) step, mean over steps
  model::TimeNs no_delay_step = 0;  // the step without launch delays (the GPUs' own time)
  struct Part {
    std::string kind, value;  // the part as whatif names it: "rank" "1", "stage" "3", "op" and a kernel's name
    // "rank 1", "stage 3", "op NAME" (a long name shortened)
    std::string label() const { return kind + " " + Shortened(value, 60); }
    double slowdown = 0;     // S with only this part measured
    model::TimeNs step = 0;  // predicted mean step with this part at its typical speed,
                             // without launch delays
    double gain = 0;         // 1 - step / no_delay_step
  };
  std::vector<Part> parts;  // the largest gain first
  // The paper's heatmap: S with only one part measured, per replayed step. Rows: every
  // rank (up to kReplayHeatRanks; beyond, the ranks whose activities exceed their kinds'
  // typical time most), in rank order, then every pipeline stage.
  std::vector<int64_t> steps;  // profiler step numbers (-1: a trace without steps, whole)
  std::vector<double> step_slowdown;  // S per step of |steps| (commlens diff compares it)
  struct HeatRow {
    std::string part;              // "rank 3", "stage 1"
    std::vector<double> per_step;  // S per step of |steps|
  };
  std::vector<HeatRow> heat;
  // S with only one part measured (the rest ideal), largest first, per kind of part: the
  // ranks attributed, every stage, the op kinds with the most time, every process group.
  struct Share {
    std::string part;  // "rank 3", "stage 1", "op nvjet...", "group 1:dp"
    double slowdown = 0;
  };
  std::vector<Share> by_rank, by_stage, by_op, by_group;
};
inline constexpr size_t kReplayHeatRanks = 16;
inline constexpr size_t kReplayMaxRanks = 512;
inline constexpr double kAttributed = 1.03;  // S under this: nothing worth attributing (whatif.h)

struct RankAnalysis {
  const model::RankTrace* trace = nullptr;
  ActivityWindow window;
  RankTimeBreakdown time;
  KernelBreakdown kernels;
  std::vector<StreamIdle> idle;
  std::vector<uint8_t> ops_in_window;  // per comm op: in the window (collectives.h OpsInWindow)
  std::vector<GroupComm> group_comm;   // communication per process group, exposed or not
};

// Job-level results are computed here, once, so every report (text, JSON, CSV, HTML)
// renders the same numbers instead of aggregating ranks itself.
struct JobAnalysis {
  std::vector<RankAnalysis> ranks;  // same order as Trace::ranks
  std::vector<JobStepBreakdown> steps;  // per profiler step, mean over ranks
  StepSummary summary;                  // the step the summary describes (over its steps)
  int64_t median_span_step = -1;        // the typical step: MedianSpanStep of |steps|
  // The earliest GPU activity of any rank's window (on the job's clock); unset without any.
  std::optional<model::TimeNs> first_gpu_start;
  KernelBreakdown kernels;              // all ranks' kernels, merged by name
  model::TimeNs span_rank_time = 0;     // the ranks' window spans summed: what |kernels|' states share
  JobIdle idle;                         // every stream's idle gaps summed, the job's longest gaps
  CollectiveAnalysis collectives;
  CrossRankAnalysis cross_rank;         // stragglers and why, hangs, contention, pipeline
  ParallelRoles roles;                  // each group's parallelism, exposed communication per role
  CounterAnalysis counters;             // NIC ports, GPU metrics, wire against claimed bytes
  std::vector<BenchCurve> bench;        // the benchmark the bandwidths were held against
  ReplayVerdict replay;                 // what the what-if replay blames (whatif.h)
  std::vector<Finding> findings;        // the verdict: every report opens with it
  StepChoice step_choice;               // which steps |steps| the summary covers
  // The steps the summary covers (every step but those left out), in step order.
  std::vector<const JobStepBreakdown*> SummarizedSteps() const;
};

// The window options the per-rank analyses use: |options.window|, cut to the steps the
// summary covers when it leaves some out (not with --all-events).
WindowOptions WindowFor(const AnalyzeOptions& options);

JobAnalysis Analyze(const model::Trace& trace, const AnalyzeOptions& options);

// The per-rank analyses: they read the rank alone, so they run where it was imported.
RankAnalysis AnalyzeRank(const model::RankTrace& rank, const AnalyzeOptions& options);

// The job-level analyses over ranks analyzed already (|ranks[i]| of trace.ranks[i], with
// times on the job's clock; their |trace| is set here). |answer| null: GPU stretches are
// measured on the trace's own tables; else the ranks' tables are elsewhere
// (rank_summary.h) and it answers the questions in one round (stretch_questions.h).
JobAnalysis AnalyzeJob(const model::Trace& trace, std::vector<RankAnalysis> ranks, const AnalyzeOptions& options,
                       const AnswerStretches* answer = nullptr);

}  // namespace commlens::analysis
