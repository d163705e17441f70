// The job's process groups: every rank's ProcessGroup of the same name is one JobGroup
// (PyTorch names groups alike on every member; recordings name a communicator by its
// name or its id). What one rank lacks (description, members) another may know.
//
// A group whose size is known but not its members (a recording) has as members the ranks
// that use it, when as many use it as it has. A group no rank could size (an NCCL
// communicator made by ncclCommSplit, whose NVTX
// ranges carry no rank count) is sized by the ranks that use it, its members are those
// ranks in rank order, and each member's index in it is its own rank there (NCCL orders a
// split communicator by the key PyTorch passes: the rank's position in the group's rank
// list, which is sorted). Communication rows whose size was one rank's share
// (kCommBytesPerRank) are then scaled to the nccl-tests size.
#include <algorithm>
#include <unordered_map>

#include "passes/passes.h"

namespace commlens::passes {

void BuildJobGroups(model::Trace* trace) {
  trace->groups.clear();
  std::unordered_map<std::string, uint32_t> by_name;
  std::vector<std::vector<int>> users;  // per job group, the ranks that have it
  for (model::RankTrace& r : trace->ranks) {
    for (model::ProcessGroup& g : r.groups) {
      auto [it, added] = by_name.emplace(g.name, static_cast<uint32_t>(trace->groups.size()));
      if (added) {
        trace->groups.push_back({g.name, {}, 0, {}, g.comm_hash});
        users.emplace_back();
      }
      model::JobGroup& j = trace->groups[it->second];
      if (j.description.empty()) j.description = g.description;
      if (j.ranks.empty()) j.ranks = g.ranks;
      if (j.size == 0) j.size = g.size > 0 ? g.size : static_cast<int>(g.ranks.size());
      users[it->second].push_back(r.rank);
      g.job_group = it->second;
    }
  }
  std::vector<bool> inferred(trace->groups.size(), false);
  for (size_t k = 0; k < trace->groups.size(); ++k) {
    model::JobGroup& j = trace->groups[k];
    if (j.size > 0 && j.ranks.empty() && users[k].size() == static_cast<size_t>(j.size)) {
      // Sized but no member named (a recording knows its communicators' rank counts, not
      // who is in them): when every member's trace is here, its users are its members.
      std::sort(users[k].begin(), users[k].end());
      j.ranks = users[k];
      continue;
    }
    if (j.size > 0) continue;
    std::sort(users[k].begin(), users[k].end());
    j.size = static_cast<int>(users[k].size());
    j.ranks = users[k];
    inferred[k] = true;
  }
  for (model::RankTrace& r : trace->ranks) {
    for (model::ProcessGroup& g : r.groups) {
      if (g.job_group == model::kNoIndex || !inferred[g.job_group]) continue;
      const model::JobGroup& j = trace->groups[g.job_group];
      if (g.size == 0) g.size = j.size;
      if (g.ranks.empty()) g.ranks = j.ranks;
      if (g.self < 0) g.self = static_cast<int>(std::lower_bound(j.ranks.begin(), j.ranks.end(), r.rank) - j.ranks.begin());
    }
    model::CommOps& c = r.comms;
    for (size_t i = 0; i < c.size(); ++i) {
      if (!(c.flags[i] & model::kCommBytesPerRank)) continue;
      c.flags[i] &= static_cast<uint8_t>(~model::kCommBytesPerRank);
      const int size = c.group[i] < r.groups.size() ? r.groups[c.group[i]].size : 0;
      if (c.bytes[i] >= 0 && size > 0 && __builtin_mul_overflow(c.bytes[i], static_cast<int64_t>(size), &c.bytes[i]))
        c.bytes[i] = -1;
    }
  }
}

}  // namespace commlens::passes
