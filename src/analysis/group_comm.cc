#include "analysis/group_comm.h"

#include <map>

#include "analysis/intervals.h"

namespace commlens::analysis {

namespace {

// Appends the entries of |rows| as step |step|.
void AddEntries(const model::RankTrace& rank, const std::vector<uint32_t>& rows, int64_t step,
                std::vector<GroupComm>* out) {
  const model::GpuActivities& g = rank.gpu;
  IntervalList compute;
  std::map<int64_t, IntervalList> comm;  // by group
  for (uint32_t i : rows) {
    if (g.cls[i] == model::ActivityClass::kCompute) {
      compute.push_back({g.start[i], g.end[i]});
    } else if (g.cls[i] == model::ActivityClass::kCommunication) {
      int64_t group = -1;
      if (const uint32_t op = g.comm[i]; op != model::kNoIndex && op < rank.comms.size())
        if (const uint32_t k = rank.comms.group[op]; k != model::kNoIndex) group = k;
      comm[group].push_back({g.start[i], g.end[i]});
    }
  }
  if (comm.empty()) return;
  Merge(&compute);
  for (auto& [group, list] : comm) {
    Merge(&list);
    const model::TimeNs total = TotalLength(list);
    if (total <= 0) continue;
    out->push_back({step, group, total, total - IntersectionLength(list, compute)});
  }
}

}  // namespace

std::vector<GroupComm> ComputeGroupComm(const model::RankTrace& rank, const ActivityWindow& w,
                                        const std::vector<std::vector<uint32_t>>& per_step) {
  std::vector<GroupComm> out;
  AddEntries(rank, w.rows, kWholeWindow, &out);
  for (size_t s = 0; s < per_step.size(); ++s)
    if (!per_step[s].empty()) AddEntries(rank, per_step[s], rank.steps[s].number, &out);
  return out;
}

}  // namespace commlens::analysis
