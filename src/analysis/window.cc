#include "analysis/window.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "common/strings.h"

namespace commlens::analysis {

ActivityWindow SelectActivities(const model::RankTrace& rank, const WindowOptions& options) {
  ActivityWindow w;
  const model::GpuActivities& g = rank.gpu;

  // Distinct step names and the latest end of any ProfilerStep range (CPU or GPU-side).
  std::set<uint32_t> step_names;
  model::TimeNs last_end = INT64_MIN;
  auto scan = [&](const auto& table) {
    for (size_t i = 0; i < table.size(); ++i) {
      if (!StartsWith(rank.strings.Get(table.name[i]), model::kProfilerStepPrefix)) continue;
      step_names.insert(table.name[i].value);
      last_end = std::max(last_end, table.end[i]);
    }
  };
  scan(rank.host);
  scan(rank.annotations);
  // The launch ranges the window keeps: (from, to] pairs in time order.
  std::vector<std::pair<model::TimeNs, model::TimeNs>> keep;
  if (options.all_events) {
  } else if (options.cut_to_steps) {
    for (const model::ProfilerStep& s : rank.steps)
      if (std::binary_search(options.steps.begin(), options.steps.end(), s.number)) keep.push_back({s.start, s.end});
    w.filtered = true;
  } else if (step_names.size() >= 2) {
    keep.push_back({INT64_MIN, last_end});
    w.filtered = true;
  } else if (rank.steps.size() >= 2) {
    keep.push_back({rank.steps.front().start, rank.steps.back().end});
    w.filtered = true;
  }
  w.cutoff = keep.empty() ? last_end : keep.back().second;
  auto kept = [&](model::TimeNs t) {
    if (t == model::kNoTime) return false;
    auto it = std::upper_bound(keep.begin(), keep.end(), t,
                               [](model::TimeNs v, const std::pair<model::TimeNs, model::TimeNs>& r) { return v < r.first; });
    if (it == keep.begin()) return false;
    --it;
    return t <= it->second;
  };
  w.rows.reserve(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (w.filtered && !kept(model::PlacementTime(rank, i))) {
      ++w.dropped;
      continue;
    }
    w.rows.push_back(i);
    w.first_start = w.first_start == model::kNoTime ? g.start[i] : std::min(w.first_start, g.start[i]);
    w.last_end = w.last_end == model::kNoTime ? g.end[i] : std::max(w.last_end, g.end[i]);
  }
  w.selected = w.rows.size();

  // Step attribution through the launch time (steps are sorted and do not overlap).
  w.step_of.assign(w.rows.size(), -1);
  const auto& steps = rank.steps;
  for (size_t k = 0; k < w.rows.size(); ++k) {
    model::TimeNs t = model::PlacementTime(rank, w.rows[k]);
    if (t == model::kNoTime || steps.empty()) continue;
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](model::TimeNs v, const model::ProfilerStep& s) {
                                 return v < s.start;
                               });
    if (it == steps.begin()) continue;
    --it;
    if (t <= it->end) w.step_of[k] = static_cast<int32_t>(it - steps.begin());
  }
  return w;
}

}  // namespace commlens::analysis
