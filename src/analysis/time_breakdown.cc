#include "analysis/time_breakdown.h"

#include <algorithm>
#include <map>

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
      case ActivityClass::kUnclassified:  // never after the classify pass
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
  // Every step, the ones the window leaves out (warm-up) too: an activity belongs to the
  // step whose range holds its launch.
  std::vector<std::vector<uint32_t>> per_step(rank.steps.size());
  const model::GpuActivities& g = rank.gpu;
  const auto& steps = rank.steps;
  for (uint32_t i = 0; i < g.size() && !steps.empty(); ++i) {
    const model::TimeNs t = g.launch[i];
    if (t == model::kNoTime) continue;
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](model::TimeNs v, const model::ProfilerStep& s) { return v < s.start; });
    if (it == steps.begin() || t > (it - 1)->end) continue;
    per_step[static_cast<size_t>(it - 1 - steps.begin())].push_back(i);
  }
  for (size_t s = 0; s < rank.steps.size(); ++s) {
    if (per_step[s].empty()) continue;
    out.steps.push_back({rank.steps[s].number, ComputeTimeBreakdown(rank, per_step[s])});
  }
  return out;
}

std::vector<JobStepBreakdown> MeanStepBreakdowns(const std::vector<const RankTimeBreakdown*>& ranks) {
  std::map<int64_t, JobStepBreakdown> steps;
  for (const RankTimeBreakdown* r : ranks) {
    for (const StepBreakdown& s : r->steps) {
      JobStepBreakdown& j = steps[s.number];
      TimeBreakdown& m = j.mean;
      j.number = s.number;
      ++j.ranks;
      m.span += s.time.span;
      m.busy += s.time.busy;
      m.idle += s.time.idle;
      m.compute += s.time.compute;
      m.non_compute += s.time.non_compute;
      m.comm += s.time.comm;
      m.memory += s.time.memory;
      m.overlap += s.time.overlap;
      m.exposed_comm += s.time.exposed_comm;
      m.activities += s.time.activities;
    }
  }
  std::vector<JobStepBreakdown> out;
  out.reserve(steps.size());
  for (auto& [number, j] : steps) {
    const auto n = static_cast<model::TimeNs>(j.ranks);
    TimeBreakdown& m = j.mean;
    for (model::TimeNs* t : {&m.span, &m.busy, &m.idle, &m.compute, &m.non_compute, &m.comm, &m.memory,
                             &m.overlap, &m.exposed_comm})
      *t /= n;
    m.activities /= static_cast<size_t>(j.ranks);
    out.push_back(j);
  }
  return out;
}

}  // namespace commlens::analysis
