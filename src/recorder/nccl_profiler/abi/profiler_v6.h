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

// ncclProfilerEventDescr_v6_t: v5's, with the CE members added to the union (v5's members
// are checked in profiler_v5.h).
static_assert(sizeof(CeCollDescr) == 88);
static_assert(offsetof(CeCollDescr, seqNumber) == 0 && offsetof(CeCollDescr, func) == 8 &&
              offsetof(CeCollDescr, sendBuff) == 16 && offsetof(CeCollDescr, recvBuff) == 24 &&
              offsetof(CeCollDescr, count) == 32 && offsetof(CeCollDescr, root) == 40 &&
              offsetof(CeCollDescr, datatype) == 48 && offsetof(CeCollDescr, syncStrategy) == 56 &&
              offsetof(CeCollDescr, intraBatchSync) == 64 && offsetof(CeCollDescr, batchSize) == 68 &&
              offsetof(CeCollDescr, numBatches) == 72 && offsetof(CeCollDescr, ceSeqNum) == 76 &&
              offsetof(CeCollDescr, stream) == 80);
static_assert(sizeof(CeSyncDescr) == 8);
static_assert(offsetof(CeSyncDescr, isComplete) == 0 && offsetof(CeSyncDescr, nRanks) == 4);
static_assert(sizeof(CeBatchDescr) == 24);
static_assert(offsetof(CeBatchDescr, numOps) == 0 && offsetof(CeBatchDescr, totalBytes) == 8 &&
              offsetof(CeBatchDescr, useIntraSync) == 16);
static_assert(sizeof(EventDescr) == 112);
static_assert(offsetof(EventDescr, type) == 0 && sizeof(EventDescr::type) == 8 &&
              offsetof(EventDescr, parentObj) == 8 && offsetof(EventDescr, rank) == 16 &&
              offsetof(EventDescr, groupApi) == 24 && offsetof(EventDescr, collApi) == 24 &&
              offsetof(EventDescr, p2pApi) == 24 && offsetof(EventDescr, kernelLaunch) == 24 &&
              offsetof(EventDescr, coll) == 24 && offsetof(EventDescr, p2p) == 24 &&
              offsetof(EventDescr, proxyOp) == 24 && offsetof(EventDescr, proxyStep) == 24 &&
              offsetof(EventDescr, kernelCh) == 24 && offsetof(EventDescr, netPlugin) == 24 &&
              offsetof(EventDescr, ceColl) == 24 && offsetof(EventDescr, ceSync) == 24 &&
              offsetof(EventDescr, ceBatch) == 24);
static_assert(HasTableLayout<Profiler>());

}  // namespace commlens::recorder::abi::v6
