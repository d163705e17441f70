// One rank's communication per process group: how long its kernels of each group ran and
// how much of that had no compute kernel beside it (exposed), over the window and per
// profiler step. The job-level parallel_roles.h adds them up per parallelism role.
//
// Per group, the union of the group's communication kernels (a GPU activity of class
// communication whose comm op names the group) is |comm|; the part of it not covered by
// the union of the same rows' compute kernels is exposed, and a stretch where several
// groups are exposed at once is shared evenly between them: |exposed| is the group's
// share, and the groups' shares add up to time_breakdown.h's exposed_comm. Without a GPU
// kernel timeline (a commlens recording: comm ops only) there are no entries.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/window.h"
#include "model/trace.h"

namespace commlens::analysis {

// Step number of the entries over the whole window.
inline constexpr int64_t kWholeWindow = INT64_MIN;

struct GroupComm {
  int64_t step = kWholeWindow;  // N of ProfilerStep#N, or kWholeWindow
  int64_t group = -1;           // index in RankTrace::groups; -1: ops of no known group
  model::TimeNs comm = 0;
  model::TimeNs exposed = 0;  // its share of the exposed communication
};

// Entries for the window's rows (step kWholeWindow) and for each step's rows (|per_step|:
// RowsPerStep(rank), as RankTimeBreakdown's steps), in (step, group) order, groups with no
// kernel left out.
std::vector<GroupComm> ComputeGroupComm(const model::RankTrace& rank, const ActivityWindow& w,
                                        const std::vector<std::vector<uint32_t>>& per_step);

}  // namespace commlens::analysis
