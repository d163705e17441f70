#include "analysis/time_breakdown.h"

#include <algorithm>

#include "analysis/intervals.h"

namespace commlens::analysis {

using model::ActivityClass;

TimeBreakdown ComputeTimeBreakdown(const model::RankTrace& rank, const std::vector<uint32_t>& rows) {
  const model::GpuActivities& g = rank.gpu;
  IntervalList all, compute, comm, memory;
  all.reserve(rows.size());
  for (uint32_t i : rows) {
    Interval iv{g.start[i], g.end[i]};
    all.push_back(iv);
    switch (g.cls[i]) {
      case ActivityClass::kCompute:
        compute.push_back(iv);
        break;
      case ActivityClass::kCommunication:
        comm.push_back(iv);
        break;
      case ActivityClass::kMemory:
        memory.push_back(iv);
        break;
      case ActivityClass::kOther:
        break;
    }
  }
  Merge(&all);
  Merge(&compute);
  Merge(&comm);
  Merge(&memory);

  TimeBreakdown b;
  b.activities = rows.size();
  if (all.empty()) return b;
  b.first_start = all.front().start;
  b.span = all.back().end - all.front().start;
  b.busy = TotalLength(all);
  b.idle = b.span - b.busy;
  b.compute = TotalLength(compute);
  b.non_compute = b.span - b.compute - b.idle;
  b.comm = TotalLength(comm);
  b.memory = TotalLength(memory);
  b.overlap = IntersectionLength(compute, comm);
  b.exposed_comm = b.comm - b.overlap;
  return b;
}

RankTimeBreakdown ComputeRankTimeBreakdown(const model::RankTrace& rank, const ActivityWindow& w) {
  RankTimeBreakdown out;
  out.total = ComputeTimeBreakdown(rank, w.rows);
  std::vector<std::vector<uint32_t>> per_step(rank.steps.size());
  for (size_t k = 0; k < w.rows.size(); ++k)
    if (w.step_of[k] >= 0) per_step[w.step_of[k]].push_back(w.rows[k]);
  for (size_t s = 0; s < rank.steps.size(); ++s) {
    if (per_step[s].empty()) continue;
    out.steps.push_back({rank.steps[s].number, ComputeTimeBreakdown(rank, per_step[s])});
  }
  return out;
}

}  // namespace commlens::analysis
