// The hot path: what each profiler callback does, independent of the ABI version. The
// adapters (adapter_v4/v5/v6.cc) convert NCCL's descriptors into these small argument
// structs and call in here.
//
// Contract (docs/recorder.md): no lock, no allocation, no system call beyond the vDSO
// clock; an event that finds its pool full is dropped and counted; a child event whose
// parent was not recorded is counted as orphaned and not recorded. Handles are tokens
// (token.h); NULL means "not recorded" and NCCL then makes no further call for it.
#pragma once

#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_abi.h"
#include "recorder/nccl_profiler/context.h"

namespace commlens::recorder {

struct CollArgs {
  const char* func;
  const char* dtype;
  const char* algo;
  const char* proto;
  uint64_t count;
  uint64_t nccl_seq;
  int root;
  uint8_t channels;
  uint8_t warps;
  uint64_t api_parent;  // handle of the CollApi event (v5+), or 0
  uint64_t user_tag = 0;                  // v7: the call's profiler tag
  const char* kernel_variant = nullptr;   // v7
  bool symmetric = false;                 // v7: a symmetric-memory kernel
};

struct P2pArgs {
  const char* func;  // "Send" or "Recv"
  const char* dtype;
  uint64_t count;
  int peer;
  uint8_t channels;
  uint64_t api_parent;
  uint64_t user_tag = 0;  // v7
};

struct CeCollArgs {
  const char* func;
  const char* dtype;
  uint64_t count;
  uint64_t nccl_seq;
  int root;
  uint64_t api_parent;
  uint64_t user_tag = 0;  // v7
};

struct ApiArgs {
  native_format::ApiKind kind;
  const char* func;
  const char* dtype;
  uint64_t count;
  uint64_t stream;
  uint64_t parent;  // handle of the GroupApi event, or 0
  int root;
  int group_depth;
  bool graph_captured;
};

void* StartColl(Context& ctx, const CollArgs& a);
void* StartP2p(Context& ctx, const P2pArgs& a);
void* StartCeColl(Context& ctx, const CeCollArgs& a);
void* StartApi(Context& ctx, const ApiArgs& a);
void* StartKernelCh(Context& ctx, uint64_t parent, uint8_t channel, uint64_t ptimer);
// ABI v7: phase |phase| (0 initial sync, 1 compute, 2 final sync) of the kernel channel
// |parent|, folded into that channel's slot.
void* StartKernelPhase(Context& ctx, uint64_t parent, uint8_t phase, uint64_t ptimer);
void* StartProxyOp(Context& ctx, uint64_t parent, const abi::ProxyOpDescr& d);
void* StartProxyStep(Context& ctx, uint64_t parent, int step);

void StopEvent(void* handle);
void RecordEventState(void* handle, int state, const abi::StateArgs* args);

}  // namespace commlens::recorder
