// Nesting depth of annotation ranges: on one thread (or GPU stream), a range that starts
// inside another and ends no later is one level deeper. Ranges that overlap without
// nesting (possible across NVTX push/pop misuse) are treated as siblings.
#include <algorithm>
#include <numeric>
#include <vector>

#include "passes/passes.h"

namespace commlens::passes {

void NestAnnotations(model::RankTrace* rank) {
  model::Annotations& a = rank->annotations;
  std::vector<uint32_t> order(a.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    if (a.device[x] != a.device[y]) return a.device[x] < a.device[y];
    if (a.pid[x] != a.pid[y]) return a.pid[x] < a.pid[y];
    if (a.tid[x] != a.tid[y]) return a.tid[x] < a.tid[y];
    if (a.start[x] != a.start[y]) return a.start[x] < a.start[y];
    return a.end[x] > a.end[y];  // the enclosing range first
  });
  std::vector<uint32_t> open;  // enclosing ranges of the current thread, innermost last
  for (size_t k = 0; k < order.size(); ++k) {
    uint32_t i = order[k];
    if (k > 0) {
      uint32_t p = order[k - 1];
      if (a.device[p] != a.device[i] || a.pid[p] != a.pid[i] || a.tid[p] != a.tid[i]) open.clear();
    }
    while (!open.empty() && !(a.start[i] >= a.start[open.back()] && a.end[i] <= a.end[open.back()]))
      open.pop_back();
    a.depth[i] = static_cast<int16_t>(std::min<size_t>(open.size(), INT16_MAX));
    open.push_back(i);
  }
}

}  // namespace commlens::passes
