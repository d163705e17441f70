// GPU activities in start order: importers append them as the source lists them (Kineto
// groups them by stream); analyses sweep them by time.
#include <algorithm>
#include <numeric>

#include "passes/passes.h"

namespace commlens::passes {

namespace {

template <typename T>
void Permute(std::vector<T>* column, const std::vector<uint32_t>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back((*column)[i]);
  column->swap(out);
}

}  // namespace

void SortActivities(model::RankTrace* rank) {
  model::GpuActivities& g = rank->gpu;
  auto earlier = [&](uint32_t a, uint32_t b) { return g.start[a] < g.start[b]; };
  std::vector<uint32_t> order(g.size());
  std::iota(order.begin(), order.end(), 0u);
  if (std::is_sorted(order.begin(), order.end(), earlier)) return;
  std::stable_sort(order.begin(), order.end(), earlier);
  Permute(&g.start, order);
  Permute(&g.end, order);
  Permute(&g.name, order);
  Permute(&g.device, order);
  Permute(&g.stream, order);
  Permute(&g.correlation, order);
  Permute(&g.kind, order);
  Permute(&g.cls, order);
  Permute(&g.copy, order);
  Permute(&g.bytes, order);
  Permute(&g.comm, order);
  Permute(&g.launch, order);
  // Every communication row follows its kernel, also rows that share one (NCCL calls of
  // one group launch one kernel; the kernel's back link names only the first).
  std::vector<uint32_t> moved_to(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) moved_to[order[i]] = i;
  for (uint32_t& a : rank->comms.activity)
    if (a != model::kNoIndex && a < moved_to.size()) a = moved_to[a];
}

}  // namespace commlens::passes
