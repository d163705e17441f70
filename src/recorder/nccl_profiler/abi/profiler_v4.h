// NCCL profiler ABI version 4 (NCCL 2.27), our declaration: the exported symbol is
// `ncclProfiler_v4`, an object of type Profiler.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_abi.h"

namespace commlens::recorder::abi::v4 {

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
};

struct P2pDescr {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
};

struct EventDescr {
  uint8_t type;     // one type bit
  void* parentObj;  // handle of the parent event (Coll's parent is its Group)
  int rank;
  union {
    CollDescr coll;
    P2pDescr p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

using InitFn = Result (*)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                          int nNodes, int nranks, int rank, Logger logfn);
using Profiler = ProfilerTable<EventDescr, InitFn>;

// ncclProfilerEventDescr_v4_t and its members, as NCCL lays them out.
static_assert(sizeof(CollDescr) == 80);
static_assert(offsetof(CollDescr, seqNumber) == 0 && offsetof(CollDescr, func) == 8 &&
              offsetof(CollDescr, sendBuff) == 16 && offsetof(CollDescr, recvBuff) == 24 &&
              offsetof(CollDescr, count) == 32 && offsetof(CollDescr, root) == 40 &&
              offsetof(CollDescr, datatype) == 48 && offsetof(CollDescr, nChannels) == 56 &&
              offsetof(CollDescr, nWarps) == 57 && offsetof(CollDescr, algo) == 64 &&
              offsetof(CollDescr, proto) == 72);
static_assert(sizeof(P2pDescr) == 40);
static_assert(offsetof(P2pDescr, func) == 0 && offsetof(P2pDescr, buff) == 8 &&
              offsetof(P2pDescr, datatype) == 16 && offsetof(P2pDescr, count) == 24 &&
              offsetof(P2pDescr, peer) == 32 && offsetof(P2pDescr, nChannels) == 36);
static_assert(sizeof(EventDescr) == 104);
static_assert(offsetof(EventDescr, type) == 0 && sizeof(EventDescr::type) == 1 &&
              offsetof(EventDescr, parentObj) == 8 && offsetof(EventDescr, rank) == 16 &&
              offsetof(EventDescr, coll) == 24 && offsetof(EventDescr, p2p) == 24 &&
              offsetof(EventDescr, proxyOp) == 24 && offsetof(EventDescr, proxyStep) == 24 &&
              offsetof(EventDescr, kernelCh) == 24 && offsetof(EventDescr, netPlugin) == 24);
static_assert(HasTableLayout<Profiler>());

}  // namespace commlens::recorder::abi::v4
