#include "model/host_events.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/strings.h"

namespace commlens::model {

namespace {

// Keeps the rows whose |keep| is set, in order, in every column of a table.
template <typename... Columns>
void KeepRows(const std::vector<uint8_t>& keep, Columns&... columns) {
  auto one = [&](auto& column) {
    size_t out = 0;
    for (size_t i = 0; i < column.size(); ++i)
      if (keep[i]) column[out++] = column[i];
    column.resize(out);
    column.shrink_to_fit();
  };
  (one(columns), ...);
}

template <typename Table>
std::vector<uint8_t> StepRows(const Table& table, const StringPool& strings) {
  std::vector<uint8_t> keep(table.size(), 0);
  for (size_t i = 0; i < table.size(); ++i) keep[i] = StartsWith(strings.Get(table.name[i]), kProfilerStepPrefix);
  return keep;
}

// A pool of the strings the rank's tables still name, in the order they are first named
// ("" stays 0), in one block of their size; every id column moves to it.
}  // namespace

void KeepNamedStrings(RankTrace* r, const StringPool& from) {
  const std::array<std::vector<StringId>*, 8> columns{&r->gpu.name,         &r->host.name,     &r->annotations.name,
                                                      &r->annotations.domain, &r->flows.category, &r->comms.dtype,
                                                      &r->comms.algorithm,    &r->comms.protocol};
  std::vector<uint32_t> moved(from.size(), kNoIndex);
  size_t bytes = 0;
  for (const std::vector<StringId>* column : columns)
    for (StringId id : *column)
      if (moved[id.value] == kNoIndex) moved[id.value] = 0, bytes += from.Get(id).size();
  StringPool pool(bytes);
  std::fill(moved.begin(), moved.end(), kNoIndex);
  for (std::vector<StringId>* column : columns)
    for (StringId& id : *column) {
      uint32_t& to = moved[id.value];
      if (to == kNoIndex) to = pool.Intern(from.Get(id)).value;
      id.value = to;
    }
  r->strings = std::move(pool);
}

void KeepNamedStrings(RankTrace* r) { KeepNamedStrings(r, r->strings); }

void DropHostEvents(RankTrace* r) {
  const uint64_t before = r->host.size() + r->annotations.size();
  HostEvents& h = r->host;
  std::vector<uint8_t> keep = StepRows(h, r->strings);
  size_t last = h.size();
  for (size_t i = 0; i < h.size(); ++i)
    if (last == h.size() || h.end[i] > h.end[last]) last = i;
  if (last < h.size()) keep[last] = 1;
  KeepRows(keep, h.start, h.end, h.name, h.pid, h.tid, h.correlation, h.kind);

  Annotations& a = r->annotations;
  keep = StepRows(a, r->strings);
  // A pipeline schedule's host action ranges name its stages (analysis/pipeline.cc).
  for (size_t i = 0; i < a.size(); ++i)
    keep[i] = keep[i] || (a.device[i] < 0 && StartsWith(r->strings.Get(a.name[i]), kPipelineActionPrefix));
  KeepRows(keep, a.start, a.end, a.name, a.domain, a.pid, a.tid, a.device, a.depth);

  r->flows = {};
  r->host_events_dropped += before - (r->host.size() + r->annotations.size());
  KeepNamedStrings(r);
}

}  // namespace commlens::model
