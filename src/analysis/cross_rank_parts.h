// The parts of the cross-rank analysis (cross_rank.h), one file each; internal.
#pragma once

#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/gpu_stretch.h"

namespace commlens::analysis {

using InWindow = std::vector<std::vector<uint8_t>>;

// Members j of matched operation k whose op is in its rank's window.
inline void InWindowMembers(const model::Trace& t, const InWindow& in, uint32_t k, std::vector<uint32_t>* out) {
  out->clear();
  const model::MatchedOps& m = t.matched;
  for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j)
    if (in[m.rank_index[j]][m.row[j]]) out->push_back(j);
}

// When an op was launched on the host (its GPU start when unknown): steps are host
// ranges, and a GPU runs behind its host, so an op belongs to the step in which it was
// launched (as analyze attributes kernels to steps).
inline model::TimeNs Launched(const model::RankTrace& r, uint32_t op) {
  const model::TimeNs t = r.comms.launch[op];
  return t == model::kNoTime ? r.comms.start[op] : t;
}

std::vector<Straggler> FindStragglers(const model::Trace& trace, const InWindow& in_window, const StepNoise& noise,
                                      StretchSource& gpu, std::vector<CrossRankStep>* per_step);
std::vector<Hang> FindHangs(const model::Trace& trace, const InWindow& in_window, const DoingAtLookup& doing_at);
void AnalyzeContention(const model::Trace& trace, const InWindow& in_window, const Arrivals& arrivals,
                       CrossRankAnalysis* out);
Pipeline DetectPipeline(const model::Trace& trace, const InWindow& in_window, StretchSource& gpu);
std::vector<ProtocolRow> ProtocolsUsed(const model::Trace& trace, const InWindow& in_window,
                                       const CollectiveAnalysis& collectives);

}  // namespace commlens::analysis
