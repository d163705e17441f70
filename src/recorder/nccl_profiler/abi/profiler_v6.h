// NCCL profiler ABI version 6 (NCCL 2.29.2 to 2.30), our declaration: the exported
// symbol is `ncclProfiler_v6`. Against v5: three copy-engine (CE) collective events join
// the descriptor union; they carry no state updates (the plugin times them itself).
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_v5.h"

namespace commlens::recorder::abi::v6 {

struct CeCollDescr {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
};

struct CeSyncDescr {
  bool isComplete;
  int nRanks;
};

struct CeBatchDescr {
  int numOps;
  size_t totalBytes;
  bool useIntraSync;
};

struct EventDescr {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    v5::GroupApiDescr groupApi;
    v5::CollApiDescr collApi;
    v5::P2pApiDescr p2pApi;
    v5::KernelLaunchDescr kernelLaunch;
    v5::CollDescr coll;
    v5::P2pDescr p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
    CeCollDescr ceColl;
    CeSyncDescr ceSync;
    CeBatchDescr ceBatch;
  };
};

using Profiler = ProfilerTable<EventDescr, v5::InitFn>;  // init as in v5

}  // namespace commlens::recorder::abi::v6
