#include "analysis/arrivals.h"

#include <algorithm>

#include "common/saturating.h"

namespace commlens::analysis {

model::TimeNs Arrivals::Transfer(const model::Trace& trace, size_t r, uint32_t row) const {
  const model::TimeNs last = last_start[r][row];
  if (last == model::kNoTime) return -1;
  const model::CommOps& c = trace.ranks[r].comms;
  return c.end[row] - std::max(last, c.start[row]);
}

uint32_t LastByPhases(const model::Trace& trace, size_t k) {
  const model::MatchedOps& m = trace.matched;
  uint32_t last = model::kNoIndex;
  model::TimeNs least = 0;
  for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
    const model::TimeNs sync = trace.ranks[m.rank_index[j]].comms.initial_sync[m.row[j]];
    if (sync == model::kNoTime) return model::kNoIndex;
    if (last == model::kNoIndex || sync < least) last = j, least = sync;
  }
  return last;
}

Arrivals ComputeArrivals(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window) {
  Arrivals out;
  out.last_start.resize(trace.ranks.size());
  out.last_rank.resize(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    out.last_start[r].assign(trace.ranks[r].comms.size(), model::kNoTime);
    out.last_rank[r].assign(trace.ranks[r].comms.size(), model::kNoIndex);
  }
  const model::MatchedOps& m = trace.matched;
  for (size_t k = 0; k < m.size(); ++k) {
    const uint32_t n = m.members(k);
    if (n < 2 || !model::AllGpuTimed(trace, k)) continue;
    bool whole = true;
    for (uint32_t j = m.first[k]; j < m.first[k + 1] && whole; ++j) whole = in_window[m.rank_index[j]][m.row[j]];
    // A member the job lacks (its rank's file is not among the inputs) may have come last.
    const int size = trace.groups[m.group[k]].size;
    const bool all_members = m.kind[k] == model::MatchKind::kP2p || size <= 0 || n >= static_cast<uint32_t>(size);
    if (!whole) continue;
    if (const uint32_t by_phases = LastByPhases(trace, k); by_phases != model::kNoIndex) {
      for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
        const model::CommOps& c = trace.ranks[m.rank_index[j]].comms;
        out.last_start[m.rank_index[j]][m.row[j]] = SaturatingAdd(c.start[m.row[j]], c.initial_sync[m.row[j]]);
        out.last_rank[m.rank_index[j]][m.row[j]] = all_members ? m.rank_index[by_phases] : model::kNoIndex;
        ++out.from_phases;
      }
      continue;
    }
    if (!all_members) continue;
    uint32_t last = m.first[k];
    model::TimeNs first_end = m.end[last];
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
      if (m.start[j] > m.start[last]) last = j;
      first_end = std::min(first_end, m.end[j]);
    }
    // An op cannot end before its last member started: where one does, the clocks
    // disagree and no member's transfer time means anything.
    if (first_end < m.start[last]) continue;
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
      out.last_start[m.rank_index[j]][m.row[j]] = m.start[last];
      out.last_rank[m.rank_index[j]][m.row[j]] = m.rank_index[last];
    }
  }
  // Ops with their own phases left (a member unmatched or missing): their own wait.
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::CommOps& c = trace.ranks[r].comms;
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (c.initial_sync[i] == model::kNoTime || out.last_start[r][i] != model::kNoTime || !in_window[r][i] ||
          (c.flags[i] & model::kCommNoGpuTiming))
        continue;
      out.last_start[r][i] = SaturatingAdd(c.start[i], c.initial_sync[i]);
      ++out.from_phases;
    }
  }
  return out;
}

}  // namespace commlens::analysis
