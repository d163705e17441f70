#include "bench/gpu/nccl_ops.h"

namespace commlens::bench::gpu {

namespace {

using model::CommOp;

ncclResult_t AllReduce(const OpArgs& a) {
  return ncclAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
}
ncclResult_t AllGather(const OpArgs& a) {
  return ncclAllGather(a.send, a.recv, a.count, a.type, a.comm, a.stream);
}
ncclResult_t Broadcast(const OpArgs& a) {
  return ncclBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
}
ncclResult_t ReduceScatter(const OpArgs& a) {
  return ncclReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
}
ncclResult_t Reduce(const OpArgs& a) {
  return ncclReduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, a.stream);
}
ncclResult_t AllToAll(const OpArgs& a) {
  return ncclAlltoAll(a.send, a.recv, a.count, a.type, a.comm, a.stream);
}
// Ring exchange: send to rank+1, receive from rank-1.
ncclResult_t SendRecv(const OpArgs& a) {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  ncclResult_t s = ncclSend(a.send, a.count, a.type, (a.rank + 1) % a.nranks, a.comm, a.stream);
  ncclResult_t v = s == ncclSuccess
                       ? ncclRecv(a.recv, a.count, a.type, (a.rank - 1 + a.nranks) % a.nranks,
                                  a.comm, a.stream)
                       : s;
  r = ncclGroupEnd();
  return v != ncclSuccess ? v : r;
}

struct Runner {
  CommOp op;
  RunFn run;
};
constexpr Runner kRunners[] = {
    {CommOp::kAllReduce, AllReduce},         {CommOp::kAllGather, AllGather},
    {CommOp::kBroadcast, Broadcast},         {CommOp::kReduceScatter, ReduceScatter},
    {CommOp::kReduce, Reduce},               {CommOp::kAllToAll, AllToAll},
    {CommOp::kSendRecv, SendRecv},
};

}  // namespace

RunFn RunnerFor(CommOp op) {
  for (const Runner& r : kRunners)
    if (r.op == op) return r.run;
  return nullptr;
}

ncclDataType_t ToNccl(DataType type) { return static_cast<ncclDataType_t>(type); }
ncclRedOp_t ToNccl(RedOp op) { return static_cast<ncclRedOp_t>(op); }

static_assert(static_cast<int>(DataType::kBfloat16) == ncclBfloat16);
static_assert(static_cast<int>(DataType::kFp8E5M2) == ncclFloat8e5m2);
static_assert(static_cast<int>(DataType::kHalf) == ncclHalf);
static_assert(static_cast<int>(RedOp::kMin) == ncclMin);

}  // namespace commlens::bench::gpu
