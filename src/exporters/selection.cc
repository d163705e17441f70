#include <algorithm>

#include "exporters/export.h"

namespace commlens::exporters {

Selection::Selection(const model::Trace& trace, const ExportOptions& options) : trace_(trace) {
  all_ = options.steps.empty();
  if (all_) return;
  ranges_.resize(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r)
    for (const model::ProfilerStep& s : trace.ranks[r].steps)
      if (std::find(options.steps.begin(), options.steps.end(), s.number) != options.steps.end())
        ranges_[r].push_back(s);
}

bool Selection::Host(size_t rank_index, model::TimeNs start, model::TimeNs end) const {
  if (all_) return true;
  for (const model::ProfilerStep& s : ranges_[rank_index])
    if (start <= s.end && end >= s.start) return true;
  return false;
}

bool Selection::Gpu(size_t rank_index, uint32_t row) const {
  if (all_) return true;
  model::TimeNs t = model::PlacementTime(trace_.ranks[rank_index], row);
  if (t == model::kNoTime) return false;
  for (const model::ProfilerStep& s : ranges_[rank_index])
    if (t >= s.start && t <= s.end) return true;
  return false;
}

bool Selection::Comm(size_t rank_index, uint32_t row) const {
  if (all_) return true;
  const model::CommOps& c = trace_.ranks[rank_index].comms;
  if (c.activity[row] != model::kNoIndex) return Gpu(rank_index, c.activity[row]);
  return Host(rank_index, c.start[row], c.end[row]);
}

}  // namespace commlens::exporters
