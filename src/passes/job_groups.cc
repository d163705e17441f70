// The job's process groups: every rank's ProcessGroup of the same name is one JobGroup
// (PyTorch names groups alike on every member; recordings name a communicator by its
// name or its id). What one rank lacks (description, members) another may know.
#include <unordered_map>

#include "passes/passes.h"

namespace commlens::passes {

void BuildJobGroups(model::Trace* trace) {
  trace->groups.clear();
  std::unordered_map<std::string, uint32_t> by_name;
  for (model::RankTrace& r : trace->ranks) {
    for (model::ProcessGroup& g : r.groups) {
      auto [it, added] = by_name.emplace(g.name, static_cast<uint32_t>(trace->groups.size()));
      if (added) trace->groups.push_back({g.name, {}, 0, {}, g.comm_hash});
      model::JobGroup& j = trace->groups[it->second];
      if (j.description.empty()) j.description = g.description;
      if (j.ranks.empty()) j.ranks = g.ranks;
      if (j.size == 0) j.size = g.size > 0 ? g.size : static_cast<int>(g.ranks.size());
      g.job_group = it->second;
    }
  }
}

}  // namespace commlens::passes
