// The run function of each collective in the table (collective_table.h): the NCCL call
// nccl-tests makes for it, with the count of CollCounts::param.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

#include "bench/types.h"
#include "model/collective.h"

namespace commlens::bench::gpu {

struct OpArgs {
  const void* send;
  void* recv;
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  int rank;
  int nranks;
  ncclComm_t comm;
  cudaStream_t stream;
};

using RunFn = ncclResult_t (*)(const OpArgs& args);

// nullptr for a collective without a run function.
RunFn RunnerFor(model::CommOp op);
ncclDataType_t ToNccl(DataType type);
ncclRedOp_t ToNccl(RedOp op);

}  // namespace commlens::bench::gpu
