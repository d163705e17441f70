// Profiler steps: the host-side ranges named ProfilerStep#N (PyTorch writes them as user
// annotations; older versions as cpu ops), sorted by start.
#include <algorithm>
#include <charconv>

#include "common/strings.h"
#include "passes/passes.h"

namespace commlens::passes {

namespace {

void AddStep(model::RankTrace* rank, model::StringId name, model::TimeNs start, model::TimeNs end) {
  std::string_view n = rank->strings.Get(name);
  if (!StartsWith(n, model::kProfilerStepPrefix)) return;
  n.remove_prefix(model::kProfilerStepPrefix.size());
  model::ProfilerStep s;
  std::from_chars(n.data(), n.data() + n.size(), s.number);  // 0 when not a number
  s.start = start;
  s.end = end;
  rank->steps.push_back(s);
}

}  // namespace

void FindSteps(model::RankTrace* rank) {
  const model::Annotations& a = rank->annotations;
  for (size_t i = 0; i < a.size(); ++i)
    if (a.device[i] < 0) AddStep(rank, a.name[i], a.start[i], a.end[i]);
  const model::HostEvents& h = rank->host;
  for (size_t i = 0; i < h.size(); ++i)
    if (h.kind[i] == model::HostKind::kCpuOp) AddStep(rank, h.name[i], h.start[i], h.end[i]);
  std::sort(rank->steps.begin(), rank->steps.end(),
            [](const model::ProfilerStep& x, const model::ProfilerStep& y) { return x.start < y.start; });
}

}  // namespace commlens::passes
