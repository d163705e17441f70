// Profiler steps: the host-side ranges named ProfilerStep#N (PyTorch writes them as user
// annotations; older versions as cpu ops), sorted by start. A trace without them (an
// Nsight Systems report) takes its steps from the outermost NVTX ranges of one thread
// named like an iteration: "step 3", "Step_3", "iteration 3", "iter 3", "Iteration 3 - fwd",
// "iteration_3", "train_step 3" (Megatron and most nsys users mark iterations that way).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

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

bool IterationNumber(std::string_view name, int64_t* number) {
  std::string lower(name.substr(0, 32));
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view n = lower;
  bool matched = false;
  for (std::string_view word : {"train_step", "iteration", "step", "iter"}) {
    if (StartsWith(n, word)) {
      n.remove_prefix(word.size());
      matched = true;
      break;
    }
  }
  if (!matched) return false;
  size_t i = 0;
  while (i < n.size() && (n[i] == ' ' || n[i] == '_' || n[i] == '#' || n[i] == ':' || n[i] == '-' || n[i] == '['))
    ++i;
  if (i == 0 || i == n.size() || !std::isdigit(static_cast<unsigned char>(n[i]))) return false;
  auto [ptr, ec] = std::from_chars(n.data() + i, n.data() + n.size(), *number);
  return ec == std::errc();
}

void FindSteps(model::RankTrace* rank) {
  const model::Annotations& a = rank->annotations;
  for (size_t i = 0; i < a.size(); ++i)
    if (a.device[i] < 0) AddStep(rank, a.name[i], a.start[i], a.end[i]);
  const model::HostEvents& h = rank->host;
  for (size_t i = 0; i < h.size(); ++i)
    if (h.kind[i] == model::HostKind::kCpuOp) AddStep(rank, h.name[i], h.start[i], h.end[i]);
  if (rank->steps.empty()) {
    // Iteration ranges: outermost ranges, on the thread that has the most of them.
    std::map<std::pair<model::ThreadId, model::ThreadId>, std::vector<model::ProfilerStep>> by_thread;
    for (size_t i = 0; i < a.size(); ++i) {
      int64_t number = 0;
      if (a.device[i] >= 0 || a.depth[i] != 0 || a.end[i] <= a.start[i]) continue;
      if (!IterationNumber(rank->strings.Get(a.name[i]), &number)) continue;
      by_thread[{a.pid[i], a.tid[i]}].push_back({number, a.start[i], a.end[i]});
    }
    for (auto& [thread, steps] : by_thread)
      if (steps.size() > rank->steps.size()) rank->steps = std::move(steps);
  }
  std::sort(rank->steps.begin(), rank->steps.end(),
            [](const model::ProfilerStep& x, const model::ProfilerStep& y) { return x.start < y.start; });
}

}  // namespace commlens::passes
