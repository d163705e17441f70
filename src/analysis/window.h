// Which GPU activities an analysis covers.
//
// A profiler trace starts and ends mid-step: kernels launched before the first
// ProfilerStep or after the last are partial work. Like HTA (run with
// include_last_profiler_step=True), when a rank has two or more ProfilerStep#N ranges the
// window keeps the GPU activities whose launching host call starts no later than the end
// of the last step (and drops those whose launch is not in the trace); with fewer steps
// every activity is kept. |all_events| keeps everything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct WindowOptions {
  bool all_events = false;
};

struct ActivityWindow {
  std::vector<uint32_t> rows;   // selected rows of RankTrace::gpu, in start order
  bool filtered = false;        // false: every activity is in
  model::TimeNs cutoff = 0;     // launch cutoff when filtered
  size_t dropped = 0;           // activities left out
  std::vector<int32_t> step_of; // per selected row: index in RankTrace::steps, or -1
};

ActivityWindow SelectActivities(const model::RankTrace& rank, const WindowOptions& options);

}  // namespace commlens::analysis
