// What a rank's GPU did in a stretch of time [lo, hi): compute kernel time, communication
// of other process groups, and idle time (no GPU activity at all), each clipped to the
// stretch. Rows are found by binary search on the start-sorted activities, so a query
// costs the rows it overlaps.
#pragma once

#include <algorithm>
#include <functional>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct Stretch {
  model::TimeNs length = 0;
  model::TimeNs compute = 0;     // compute kernels (summed, clipped)
  model::TimeNs other_comm = 0;  // communication kernels of other process groups
  model::TimeNs idle = 0;        // no GPU activity on any stream
};

class GpuStretches {
 public:
  explicit GpuStretches(const model::RankTrace& rank) : rank_(rank) {
    for (size_t i = 0; i < rank.gpu.size(); ++i)
      longest_ = std::max(longest_, rank.gpu.end[i] - rank.gpu.start[i]);
  }

  // |own_group|: the job group whose communication is not "other". |on_compute| is
  // called with each compute kernel's name and clipped time, when given.
  Stretch Measure(model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                  const std::function<void(std::string_view, model::TimeNs)>& on_compute = {}) const {
    Stretch s;
    if (hi <= lo) return s;
    s.length = hi - lo;
    const model::GpuActivities& g = rank_.gpu;
    auto first = std::lower_bound(g.start.begin(), g.start.end(), lo - longest_);
    model::TimeNs covered_to = lo, busy = 0;
    for (size_t i = static_cast<size_t>(first - g.start.begin()); i < g.size() && g.start[i] < hi; ++i) {
      const model::TimeNs a = std::max(g.start[i], lo), b = std::min(g.end[i], hi);
      if (b <= a) continue;
      if (b > covered_to) busy += b - std::max(a, covered_to), covered_to = b;
      if (g.cls[i] == model::ActivityClass::kCompute) {
        s.compute += b - a;
        if (on_compute) on_compute(rank_.strings.Get(g.name[i]), b - a);
      } else if (g.cls[i] == model::ActivityClass::kCommunication && g.comm[i] != model::kNoIndex) {
        const uint32_t group = rank_.comms.group[g.comm[i]];
        const uint32_t job_group = group == model::kNoIndex ? model::kNoIndex : rank_.groups[group].job_group;
        if (job_group != own_group) s.other_comm += b - a;
      }
    }
    s.idle = s.length - busy;
    return s;
  }

  bool has_timeline() const { return rank_.gpu.size() > 0; }

 private:
  const model::RankTrace& rank_;
  model::TimeNs longest_ = 0;
};

}  // namespace commlens::analysis
