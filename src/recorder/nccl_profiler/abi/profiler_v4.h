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

}  // namespace commlens::recorder::abi::v4
