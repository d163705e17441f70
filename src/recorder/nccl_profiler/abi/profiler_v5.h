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

// ncclProfilerEventDescr_v5_t and its members, as NCCL lays them out.
static_assert(sizeof(GroupApiDescr) == 8);
static_assert(offsetof(GroupApiDescr, graphCaptured) == 0 && offsetof(GroupApiDescr, groupDepth) == 4);
static_assert(sizeof(CollApiDescr) == 48);
static_assert(offsetof(CollApiDescr, func) == 0 && offsetof(CollApiDescr, count) == 8 &&
              offsetof(CollApiDescr, datatype) == 16 && offsetof(CollApiDescr, root) == 24 &&
              offsetof(CollApiDescr, stream) == 32 && offsetof(CollApiDescr, graphCaptured) == 40);
static_assert(sizeof(P2pApiDescr) == 40);
static_assert(offsetof(P2pApiDescr, func) == 0 && offsetof(P2pApiDescr, count) == 8 &&
              offsetof(P2pApiDescr, datatype) == 16 && offsetof(P2pApiDescr, stream) == 24 &&
              offsetof(P2pApiDescr, graphCaptured) == 32);
static_assert(sizeof(KernelLaunchDescr) == 8 && offsetof(KernelLaunchDescr, stream) == 0);
static_assert(sizeof(CollDescr) == 88);
static_assert(offsetof(CollDescr, seqNumber) == 0 && offsetof(CollDescr, func) == 8 &&
              offsetof(CollDescr, sendBuff) == 16 && offsetof(CollDescr, recvBuff) == 24 &&
              offsetof(CollDescr, count) == 32 && offsetof(CollDescr, root) == 40 &&
              offsetof(CollDescr, datatype) == 48 && offsetof(CollDescr, nChannels) == 56 &&
              offsetof(CollDescr, nWarps) == 57 && offsetof(CollDescr, algo) == 64 &&
              offsetof(CollDescr, proto) == 72 && offsetof(CollDescr, parentGroup) == 80);
static_assert(sizeof(P2pDescr) == 48);
static_assert(offsetof(P2pDescr, func) == 0 && offsetof(P2pDescr, buff) == 8 &&
              offsetof(P2pDescr, datatype) == 16 && offsetof(P2pDescr, count) == 24 &&
              offsetof(P2pDescr, peer) == 32 && offsetof(P2pDescr, nChannels) == 36 &&
              offsetof(P2pDescr, parentGroup) == 40);
static_assert(sizeof(EventDescr) == 112);
static_assert(offsetof(EventDescr, type) == 0 && sizeof(EventDescr::type) == 8 &&
              offsetof(EventDescr, parentObj) == 8 && offsetof(EventDescr, rank) == 16 &&
              offsetof(EventDescr, groupApi) == 24 && offsetof(EventDescr, collApi) == 24 &&
              offsetof(EventDescr, p2pApi) == 24 && offsetof(EventDescr, kernelLaunch) == 24 &&
              offsetof(EventDescr, coll) == 24 && offsetof(EventDescr, p2p) == 24 &&
              offsetof(EventDescr, proxyOp) == 24 && offsetof(EventDescr, proxyStep) == 24 &&
              offsetof(EventDescr, kernelCh) == 24 && offsetof(EventDescr, netPlugin) == 24);
static_assert(HasTableLayout<Profiler>());

}  // namespace commlens::recorder::abi::v5
