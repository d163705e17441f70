#include "bench/collective_table.h"

#include <array>

namespace commlens::bench {

namespace {

using model::CommOp;

// nccl-tests rounds per-rank slices down to a multiple of 16 bytes.
int64_t Per16Bytes(int64_t count, int elt_size, int nranks) {
  int64_t per_rank = count / nranks;
  int64_t align = 16 / elt_size;
  return per_rank - per_rank % align;
}

CollCounts WholeVector(int64_t count, int, int) { return {count, count, count, 0, 0}; }

CollCounts AllGatherCounts(int64_t count, int elt, int n) {
  int64_t base = Per16Bytes(count, elt, n);
  return {base, base * n, base, base, 0};
}

CollCounts ReduceScatterCounts(int64_t count, int elt, int n) {
  int64_t base = Per16Bytes(count, elt, n);
  return {base * n, base, base, 0, base};
}

CollCounts AllToAllCounts(int64_t count, int elt, int n) {
  int64_t base = Per16Bytes(count, elt, n);
  return {base * n, base * n, base, 0, 0};
}

ExpectPlan ReduceAll(const CollCounts&, int, int, int) { return {true, true, 0, 0, 0}; }

ExpectPlan GatherSlices(const CollCounts& c, int, int, int) { return {true, false, c.send, 0, 0}; }

ExpectPlan ReduceOwnSlice(const CollCounts& c, int rank, int, int) {
  return {true, true, 0, 0, c.recv * rank};
}

ExpectPlan ExchangeSlices(const CollCounts& c, int rank, int, int) {
  return {true, false, c.param, 0, c.param * rank};
}

ExpectPlan CopyFromRoot(const CollCounts&, int, int, int root) {
  return {true, false, 0, root, 0};
}

ExpectPlan ReduceToRoot(const CollCounts&, int rank, int, int root) {
  return {rank == root, true, 0, 0, 0};
}

// Ring: rank r sends to r+1 and receives from r-1 (as nccl-tests' sendrecv_perf).
ExpectPlan FromPreviousRank(const CollCounts&, int rank, int n, int) {
  return {true, false, 0, (rank - 1 + n) % n, 0};
}

constexpr std::array<CollectiveSpec, 7> kCollectives = {{
    {CommOp::kAllReduce, "all_reduce", true, false, true, WholeVector, ReduceAll},
    {CommOp::kAllGather, "all_gather", false, false, true, AllGatherCounts, GatherSlices},
    {CommOp::kBroadcast, "broadcast", false, true, true, WholeVector, CopyFromRoot},
    {CommOp::kReduceScatter, "reduce_scatter", true, false, true, ReduceScatterCounts,
     ReduceOwnSlice},
    {CommOp::kReduce, "reduce", true, true, true, WholeVector, ReduceToRoot},
    {CommOp::kAllToAll, "alltoall", false, false, false, AllToAllCounts, ExchangeSlices},
    {CommOp::kSendRecv, "sendrecv", false, false, false, WholeVector, FromPreviousRank},
}};

}  // namespace

std::span<const CollectiveSpec> Collectives() { return kCollectives; }

const CollectiveSpec* FindCollective(model::CommOp op) {
  for (const CollectiveSpec& spec : kCollectives)
    if (spec.op == op) return &spec;
  return nullptr;
}

const CollectiveSpec* FindCollective(std::string_view name) {
  // PyTorch-name parsing ignores underscores, so it maps every spelling we accept.
  model::CommOp op = model::CommOpFromPyTorchName(name);
  return op == model::CommOp::kUnknown ? nullptr : FindCollective(op);
}

}  // namespace commlens::bench
