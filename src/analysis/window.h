// Which GPU activities an analysis covers.
//
// A profiler trace starts and ends mid-step: kernels launched before the first
// ProfilerStep or after the last are partial work. Like HTA (run with
// include_last_profiler_step=True), when a rank has two or more ProfilerStep#N ranges the
// window keeps the GPU activities whose launching host call starts no later than the end
// of the last step (and drops those whose launch is not in the trace). Steps from NVTX
// iteration ranges (an Nsight report, which captures the start-up too) keep what was
// launched from the first step's start to the last one's end. With fewer steps every
// activity is kept. When the summary leaves steps out (warm-up, --steps), the window is
// what was launched inside the summarized steps. |all_events| keeps everything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct WindowOptions {
  bool all_events = false;
  // Cut the window to the activities launched inside these steps of the rank (the ones
  // the summary covers, step_choice.h), when some step is left out.
  bool cut_to_steps = false;
  std::vector<int64_t> steps;  // sorted
};

struct ActivityWindow {
  // Selected rows of RankTrace::gpu, in start order, and per row its index in
  // RankTrace::steps or -1. Both are empty in a rank's summary (rank_summary.h): the
  // fields below say what the job-level analyses need of them.
  std::vector<uint32_t> rows;
  std::vector<int32_t> step_of;
  size_t selected = 0;          // rows.size()
  bool filtered = false;        // false: every activity is in
  model::TimeNs cutoff = 0;     // launch cutoff when filtered
  size_t dropped = 0;           // activities left out
  // The selected activities' first start and last end; kNoTime when none is selected.
  model::TimeNs first_start = model::kNoTime, last_end = model::kNoTime;
};

ActivityWindow SelectActivities(const model::RankTrace& rank, const WindowOptions& options);

}  // namespace commlens::analysis
