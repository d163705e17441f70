#include "distributed/host_lookup.h"

#include "importers/registry.h"

namespace commlens::distributed {

std::string HostEventsAgain::DoingAt(const std::string& path, uint32_t part, uint64_t input_bytes,
                                     model::TimeNs file_time) {
  if (path != path_) {
    path_ = path;
    ranks_.clear();
    if (Result<std::vector<model::RankTrace>> read = importers::ImportFile(path); read.ok())
      ranks_ = std::move(read).value();
  }
  if (part >= ranks_.size() || ranks_[part].input_bytes != input_bytes) return {};
  return analysis::DoingAt(ranks_[part], file_time);
}

std::string HostEventsAgain::DoingAt(const model::Trace& trace, size_t rank_index, model::TimeNs t) {
  const model::RankTrace& rank = trace.ranks[rank_index];
  return DoingAt(rank.path, rank.part, rank.input_bytes, FileTime(trace, rank_index, t));
}

model::TimeNs FileTime(const model::Trace& trace, size_t rank_index, model::TimeNs t) {
  const model::ClockAlignment& c = trace.clock;
  return c.applied && rank_index < c.ranks.size() ? t + c.ranks[rank_index].offset : t;
}

analysis::DoingAtLookup DoingAtFromFiles(const model::Trace& trace) {
  auto again = std::make_shared<HostEventsAgain>();
  return [&trace, again](size_t r, model::TimeNs t) { return again->DoingAt(trace, r, t); };
}

}  // namespace commlens::distributed
