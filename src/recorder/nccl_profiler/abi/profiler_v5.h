// NCCL profiler ABI version 5 (NCCL 2.28), our declaration: the exported symbol is
// `ncclProfiler_v5`. Against v4: the type field is 64-bit, API-level events appear, Coll
// and P2p name their v4-style group in parentGroup (parentObj is now the API event), and
// init takes the communicator id second.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_abi.h"

namespace commlens::recorder::abi::v5 {

struct GroupApiDescr {
  bool graphCaptured;
  int groupDepth;  // 1: NCCL's implicit group; > 1: inside ncclGroupStart/End
};

struct CollApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};

struct P2pApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};

struct KernelLaunchDescr {
  void* stream;
};

struct CollDescr {
  uint64_t seqNumber;  // per communicator and collective type
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
};

struct P2pDescr {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};

struct EventDescr {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollDescr coll;
    P2pDescr p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

using InitFn = Result (*)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                          int nNodes, int nranks, int rank, Logger logfn);
using Profiler = ProfilerTable<EventDescr, InitFn>;

}  // namespace commlens::recorder::abi::v5
