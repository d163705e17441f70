// Links each GPU activity to the host call that launched it (CUDA runtime or driver call
// with the same correlation id) and keeps that call's start as the activity's launch.
#include <unordered_map>

#include "passes/passes.h"

namespace commlens::passes {

void LinkLaunches(model::RankTrace* rank) {
  const model::HostEvents& h = rank->host;
  model::GpuActivities& g = rank->gpu;
  if (g.size() == 0) return;
  std::unordered_map<int64_t, model::TimeNs> launch_of;
  launch_of.reserve(h.size() / 4);
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.correlation[i] == 0) continue;
    if (h.kind[i] != model::HostKind::kRuntime && h.kind[i] != model::HostKind::kDriver) continue;
    launch_of.emplace(h.correlation[i], h.start[i]);
  }
  uint64_t unmatched = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    auto it = launch_of.find(g.correlation[i]);
    if (it != launch_of.end()) g.launch[i] = it->second;
    else ++unmatched;
  }
  // Activities launched before the profiler started have no launch in the trace: an
  // expected loss at the window's edge, counted so the report can say how many.
  if (unmatched)
    rank->stats.Count(model::ImportIssue::kUnmatchedCorrelation, 0,
                      "GPU activities whose launching call is not in the trace", unmatched);
}

}  // namespace commlens::passes
