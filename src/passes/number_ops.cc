// Sequence numbers for the ops the source did not number, so that the k-th collective
// of a group on one rank is the k-th on every other, and the k-th message from one rank
// to another is the k-th the other receives from it. Ops are taken in launch order (GPU
// start order when the launch is unknown); numbering goes on after the highest number
// the source gave in the same sequence.
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "passes/passes.h"

namespace commlens::passes {

void NumberOps(model::RankTrace* rank) {
  model::CommOps& c = rank->comms;
  if (c.size() == 0) return;
  auto when = [&](uint32_t i) {
    uint32_t a = c.activity[i];
    model::TimeNs t = a != model::kNoIndex ? rank->gpu.launch[a] : model::kNoTime;
    return t != model::kNoTime ? t : c.start[i];
  };
  std::vector<uint32_t> order(c.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return when(a) < when(b); });
  // One sequence per (group, op direction, peer): p2p ops by direction and peer,
  // collectives (direction and peer 0) per group and engine.
  using Sequence = std::tuple<uint32_t, int, int32_t, uint8_t>;
  // Of the flags only the engine separates sequences (a batched op is numbered with the
  // lone ones of its pair).
  auto sequence_of = [&](uint32_t i) -> Sequence {
    const uint8_t engine = c.flags[i] & model::kCommCopyEngine;
    if (model::IsPointToPoint(c.op[i])) return {c.group[i], static_cast<int>(c.op[i]), c.peer[i], engine};
    return {c.group[i], 0, 0, engine};
  };
  std::map<Sequence, int64_t> next;
  for (uint32_t i : order)
    if (c.seq[i] >= 0) {
      int64_t& n = next[sequence_of(i)];
      n = std::max(n, c.seq[i] + 1);
    }
  for (uint32_t i : order)
    if (c.seq[i] < 0) c.seq[i] = next[sequence_of(i)]++;
}

}  // namespace commlens::passes
