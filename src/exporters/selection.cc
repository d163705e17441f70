#include <algorithm>
#include <charconv>

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
  const model::GpuActivities& g = trace_.ranks[rank_index].gpu;
  model::TimeNs t = g.launch[row];
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

Result<std::vector<int64_t>> ParseStepList(const std::string& text) {
  std::vector<int64_t> steps;
  auto number = [](std::string_view s, int64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size() && *v >= 0;
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t dash = part.find('-');
    int64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!number(part, &lo)) return Error("--steps: '" + std::string(part) + "' is not a step number");
      hi = lo;
    } else if (!number(part.substr(0, dash), &lo) || !number(part.substr(dash + 1), &hi) || hi < lo) {
      return Error("--steps: '" + std::string(part) + "' is not a range A-B with A <= B");
    }
    if (hi - lo > 1'000'000) return Error("--steps: the range '" + std::string(part) + "' is too large");
    for (int64_t s = lo; s <= hi; ++s) steps.push_back(s);
  }
  if (steps.empty()) return Error("--steps: no step numbers given");
  return steps;
}

}  // namespace commlens::exporters
