// NCCL profiler ABI version 7 (NCCL after 2.30), our declaration: the exported symbol is
// `ncclProfiler_v7`. Against v6: the API calls and the ops they start carry the
// application's per-call profiler tag (userTag, 0 when untagged), the Coll descriptor
// names its kernel variant and whether it is a symmetric-memory kernel, and a kernel
// barrier phase event joins the union (type bit 15, stopped by state 31 with its stop
// timer in the kernelCh state argument). Init, the table and the state arguments are
// v6's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_v6.h"

namespace commlens::recorder::abi::v7 {

struct CollApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
  uint64_t userTag;
};

struct P2pApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
  uint64_t userTag;
};

struct CollDescr {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
  const char* kernelVariant;
  bool isSymColl;
  uint64_t userTag;
};

struct P2pDescr {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
  uint64_t userTag;
};

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
  uint64_t userTag;
};

struct KernelPhaseDescr {
  uint8_t channelId;
  uint8_t phaseId;  // 0: initial sync, 1: compute, 2: final sync
  const char* phaseName;
  uint64_t pTimer;  // GPU %globaltimer at the phase's start, ns
};

struct EventDescr {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    v5::GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    v5::KernelLaunchDescr kernelLaunch;
    CollDescr coll;
    P2pDescr p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
    CeCollDescr ceColl;
    v6::CeSyncDescr ceSync;
    v6::CeBatchDescr ceBatch;
    KernelPhaseDescr kernelPhase;
  };
};

using Profiler = ProfilerTable<EventDescr, v5::InitFn>;  // init as in v5 and v6

// ncclProfilerEventDescr_v7_t and its new members, as NCCL lays them out (LP64).
static_assert(sizeof(CollApiDescr) == 56);
static_assert(offsetof(CollApiDescr, func) == 0 && offsetof(CollApiDescr, count) == 8 &&
              offsetof(CollApiDescr, datatype) == 16 && offsetof(CollApiDescr, root) == 24 &&
              offsetof(CollApiDescr, stream) == 32 && offsetof(CollApiDescr, graphCaptured) == 40 &&
              offsetof(CollApiDescr, userTag) == 48);
static_assert(sizeof(P2pApiDescr) == 48);
static_assert(offsetof(P2pApiDescr, func) == 0 && offsetof(P2pApiDescr, count) == 8 &&
              offsetof(P2pApiDescr, datatype) == 16 && offsetof(P2pApiDescr, stream) == 24 &&
              offsetof(P2pApiDescr, graphCaptured) == 32 && offsetof(P2pApiDescr, userTag) == 40);
static_assert(sizeof(CollDescr) == 112);
static_assert(offsetof(CollDescr, seqNumber) == 0 && offsetof(CollDescr, func) == 8 &&
              offsetof(CollDescr, sendBuff) == 16 && offsetof(CollDescr, recvBuff) == 24 &&
              offsetof(CollDescr, count) == 32 && offsetof(CollDescr, root) == 40 &&
              offsetof(CollDescr, datatype) == 48 && offsetof(CollDescr, nChannels) == 56 &&
              offsetof(CollDescr, nWarps) == 57 && offsetof(CollDescr, algo) == 64 &&
              offsetof(CollDescr, proto) == 72 && offsetof(CollDescr, parentGroup) == 80 &&
              offsetof(CollDescr, kernelVariant) == 88 && offsetof(CollDescr, isSymColl) == 96 &&
              offsetof(CollDescr, userTag) == 104);
static_assert(sizeof(P2pDescr) == 56);
static_assert(offsetof(P2pDescr, func) == 0 && offsetof(P2pDescr, buff) == 8 &&
              offsetof(P2pDescr, datatype) == 16 && offsetof(P2pDescr, count) == 24 &&
              offsetof(P2pDescr, peer) == 32 && offsetof(P2pDescr, nChannels) == 36 &&
              offsetof(P2pDescr, parentGroup) == 40 && offsetof(P2pDescr, userTag) == 48);
static_assert(sizeof(CeCollDescr) == 96);
static_assert(offsetof(CeCollDescr, stream) == 80 && offsetof(CeCollDescr, userTag) == 88);
static_assert(sizeof(KernelPhaseDescr) == 24);
static_assert(offsetof(KernelPhaseDescr, channelId) == 0 && offsetof(KernelPhaseDescr, phaseId) == 1 &&
              offsetof(KernelPhaseDescr, phaseName) == 8 && offsetof(KernelPhaseDescr, pTimer) == 16);
static_assert(sizeof(EventDescr) == 136);
static_assert(offsetof(EventDescr, type) == 0 && offsetof(EventDescr, parentObj) == 8 &&
              offsetof(EventDescr, rank) == 16 && offsetof(EventDescr, groupApi) == 24 &&
              offsetof(EventDescr, collApi) == 24 && offsetof(EventDescr, coll) == 24 &&
              offsetof(EventDescr, p2p) == 24 && offsetof(EventDescr, kernelCh) == 24 &&
              offsetof(EventDescr, ceColl) == 24 && offsetof(EventDescr, kernelPhase) == 24);
static_assert(HasTableLayout<Profiler>());

}  // namespace commlens::recorder::abi::v7
