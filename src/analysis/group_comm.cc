#include "analysis/group_comm.h"

#include <algorithm>
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
  // Each group's time with no compute beside it; a stretch where several groups' are
  // exposed at once is shared evenly between them, so the groups add up to the rank's
  // exposed communication.
  std::vector<IntervalList> exposed;
  std::vector<model::TimeNs> edges;
  for (auto& [group, list] : comm) {
    Merge(&list);
    exposed.push_back(Difference(list, compute));
    for (const Interval& iv : exposed.back()) edges.push_back(iv.start), edges.push_back(iv.end);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<model::TimeNs> share(exposed.size(), 0);
  std::vector<size_t> at(exposed.size(), 0);  // per group, its first interval not yet passed
  std::vector<size_t> active;
  for (size_t e = 0; e + 1 < edges.size(); ++e) {
    const model::TimeNs lo = edges[e], hi = edges[e + 1];
    active.clear();
    for (size_t k = 0; k < exposed.size(); ++k) {
      while (at[k] < exposed[k].size() && exposed[k][at[k]].end <= lo) ++at[k];
      if (at[k] < exposed[k].size() && exposed[k][at[k]].start <= lo) active.push_back(k);
    }
    const auto n = static_cast<model::TimeNs>(active.size());
    for (size_t i = 0; i < active.size(); ++i)  // the remainder to the first ones: whole ns
      share[active[i]] += (hi - lo) / n + (static_cast<model::TimeNs>(i) < (hi - lo) % n ? 1 : 0);
  }
  size_t k = 0;
  for (const auto& [group, list] : comm) {
    if (const model::TimeNs total = TotalLength(list); total > 0) out->push_back({step, group, total, share[k]});
    ++k;
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
