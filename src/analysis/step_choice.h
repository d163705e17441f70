// Which profiler steps a job's summary covers. The first steps of a run are slow
// (allocator warm-up, autotuning, NCCL's first connections: on the shipped Nsight sample
// step #0 takes 1.9 s against 13.4 ms for the steady ones) and a single odd step (a
// checkpoint, a stall) is not the job's pace. Such steps are shown, step by step, but left
// out of the summary: the time breakdown, kernels, idle gaps, collectives and the
// cross-rank findings cover the steady steps, and the headline step time is their median.
//
// The rule (docs/analysis.md, "Steps"), on each step's length (the median over ranks of
// its host range) and M, the median length over all steps, with three steps or more:
//   warm-up: the leading steps (from the first, while it holds) longer than 1.5 M: out of
//            the analysis window altogether;
//   outlier: any other step longer than 3 M: out of the step statistics (the headline
//            step time, the per-step means) but still in the window, since what makes a
//            late step long (a hang, a stall at a collective) is what the cross-rank
//            findings must see.
// A user's --steps selection replaces the rule: exactly those steps, each of which the job
// must have (else an error naming the steps it has), and the window is cut to them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::analysis {

struct StepChoice {
  struct Step {
    int64_t number = 0;
    model::TimeNs length = 0;  // median over the ranks that have it of its host range
    std::string left_out;      // "" when summarized; "warm-up", "outlier", "not selected"
    bool cut = false;          // out of the analysis window too (warm-up, not selected)
  };
  std::vector<Step> steps;     // every step a rank has, in number order
  bool selected_by_user = false;
  // The summarized step numbers, sorted; empty when the job has no steps.
  std::vector<int64_t> Summarized() const;
  // The step numbers the window keeps, sorted.
  std::vector<int64_t> Windowed() const;
  // Whether some step is left out of the summary.
  bool LeavesOut() const;
  // Whether the window must be cut to Windowed() (some step is cut).
  bool CutsWindow() const;
};

// The steps of |trace| and which the summary covers: |requested| (--steps) when given,
// else the warm-up rule. An error names a requested step the job lacks.
Result<StepChoice> ChooseSteps(const model::Trace& trace, const std::vector<int64_t>& requested = {});
// The same from each rank's steps alone (analyze --mpi chooses before the ranks meet).
Result<StepChoice> ChooseSteps(const std::vector<const std::vector<model::ProfilerStep>*>& per_rank,
                               const std::vector<int64_t>& requested = {});

// "3-6", "0, 2, 5-7": step numbers as a user writes them.
std::string StepList(const std::vector<int64_t>& sorted);

// Parses a --steps argument ("5", "3-6", "3,5-7") into step numbers; an error says why.
Result<std::vector<int64_t>> ParseStepList(const std::string& text);

}  // namespace commlens::analysis
