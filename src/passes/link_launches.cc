// Links each GPU activity to the host call that launched it (CUDA runtime or driver call
// with the same correlation id) and keeps that call's start as the activity's launch.
//
// The calls' (correlation id, row) pairs are sorted once and searched: a flat array, not a
// hash map, since an Nsight export holds a correlation id for every one of its millions of
// CUDA API calls (a map of them cost seconds to build and to free). Correlation ids grow
// with time, so the array is nearly sorted already. When two calls share an id, the first
// one (in host order) is the launch.
#include <algorithm>
#include <utility>
#include <vector>

#include "passes/passes.h"

namespace commlens::passes {

void LinkLaunches(model::RankTrace* rank) {
  const model::HostEvents& h = rank->host;
  model::GpuActivities& g = rank->gpu;
  if (g.size() == 0) return;
  std::vector<std::pair<int64_t, uint32_t>> calls;  // (correlation id, host row)
  calls.reserve(h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.correlation[i] == 0) continue;
    if (h.kind[i] != model::HostKind::kRuntime && h.kind[i] != model::HostKind::kDriver) continue;
    calls.emplace_back(h.correlation[i], static_cast<uint32_t>(i));
  }
  if (!std::is_sorted(calls.begin(), calls.end())) std::sort(calls.begin(), calls.end());
  if (calls.empty() && rank->launches_unrecorded) return;  // said by the importer; placed by GPU start
  uint64_t unmatched = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    auto it = std::lower_bound(calls.begin(), calls.end(), std::make_pair(g.correlation[i], uint32_t{0}));
    if (it != calls.end() && it->first == g.correlation[i]) g.launch[i] = h.start[it->second];
    else ++unmatched;
  }
  // Activities launched before the profiler started have no launch in the trace: an
  // expected loss at the window's edge, counted so the report can say how many.
  if (unmatched)
    rank->stats.Count(model::ImportIssue::kUnmatchedCorrelation, 0,
                      "GPU activities whose launching call is not in the trace", unmatched);
  // Each comm op keeps its kernel's launch: the job-level analyses read it without the
  // GPU table, which may stay with another process (analysis/rank_summary.h).
  model::CommOps& c = rank->comms;
  for (size_t i = 0; i < c.size(); ++i)
    if (c.activity[i] != model::kNoIndex) c.launch[i] = g.launch[c.activity[i]];
}

}  // namespace commlens::passes
