// What the per-version adapters share: the calls that do not depend on the ABI version,
// and startEvent written once over the descriptor of version V (v4 to v7 name their
// common members alike). What V changes:
//   v4   a Coll's / P2p's parentObj is its Group event (not recorded);
//   v5+  it is the API call (CollApi / P2pApi), and the API events exist;
//   v6+  copy-engine collectives exist;
//   v7   ops carry the call's user tag, and a Coll its kernel variant and whether the
//        kernel is a symmetric-memory one; kernel channels have barrier phases (asked
//        for only when the event mask names them: `phases`).
// Each adapter_vN.cc owns its init (whose argument order changed in v5) and its exported
// table.
#pragma once

#include <cstdint>

#include "recorder/nccl_profiler/abi/profiler_abi.h"
#include "recorder/nccl_profiler/event_recorder.h"
#include "recorder/nccl_profiler/recording_session.h"

namespace commlens::recorder::adapter {

// Event kinds each ABI version can deliver and we record.
inline constexpr uint32_t kSupportedV4 = static_cast<uint32_t>(
    abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep | abi::kKernelCh);
inline constexpr uint32_t kSupportedV5 = kSupportedV4 | static_cast<uint32_t>(
    abi::kGroupApi | abi::kCollApi | abi::kP2pApi | abi::kKernelLaunch);
inline constexpr uint32_t kSupportedV6 = kSupportedV5 | static_cast<uint32_t>(abi::kCeColl);
inline constexpr uint32_t kSupportedV7 = kSupportedV6 | static_cast<uint32_t>(abi::kKernelPhase);

inline abi::Result Init(void** context, int* mask, const CommParams& params, uint32_t supported,
                        abi::Logger log) {
  if (context == nullptr || mask == nullptr) return abi::kInvalidArgument;
  *context = nullptr;
  Context* ctx = nullptr;
  abi::Result r = TheSession().Init(params, mask, supported, log, &ctx);
  if (r == abi::kSuccess) *context = ctx;
  return r;
}

inline abi::Result Finalize(void* context) {
  TheSession().Finalize(static_cast<Context*>(context));
  return abi::kSuccess;
}

inline abi::Result Stop(void* handle) {
  StopEvent(handle);
  return abi::kSuccess;
}

inline abi::Result Record(void* handle, abi::State state, abi::StateArgs* args) {
  RecordEventState(handle, state, args);
  return abi::kSuccess;
}

inline uint64_t Value(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The call's user tag, where the version has one (v7), else 0.
template <typename Descr>
uint64_t UserTag(const Descr& d) {
  if constexpr (requires { d.userTag; }) return d.userTag;
  else return 0;
}

// Coll and P2p descriptors: the same members in every version (v5+ add parentGroup, v7
// the members below the shared ones).
template <typename CollDescr>
CollArgs ToCollArgs(const CollDescr& c, const void* api_parent) {
  CollArgs a{c.func,  c.datatype,  c.algo,      c.proto,   c.count,
             c.seqNumber, c.root, c.nChannels, c.nWarps, Value(api_parent)};
  a.user_tag = UserTag(c);
  if constexpr (requires { c.kernelVariant; }) {
    a.kernel_variant = c.kernelVariant;
    a.symmetric = c.isSymColl;
  }
  return a;
}

template <typename P2pDescr>
P2pArgs ToP2pArgs(const P2pDescr& p, const void* api_parent) {
  P2pArgs a{p.func, p.datatype, p.count, p.peer, p.nChannels, Value(api_parent)};
  a.user_tag = UserTag(p);
  return a;
}

// The events below the op level, identical from v4 on.
template <typename Descr>
void* StartChildEvent(Context& ctx, const Descr& d, uint64_t type) {
  switch (type) {
    case abi::kKernelCh:
      return StartKernelCh(ctx, Value(d.parentObj), d.kernelCh.channelId, d.kernelCh.pTimer);
    case abi::kProxyOp:
      return StartProxyOp(ctx, Value(d.parentObj), d.proxyOp);
    case abi::kProxyStep:
      return StartProxyStep(ctx, Value(d.parentObj), d.proxyStep.step);
    default:
      return nullptr;
  }
}

// The API-level events, alike from v5 on (v7's user tag is kept on the ops).
template <typename Descr>
void* StartApiEvent(Context& ctx, const Descr& d, uint64_t type) {
  using native_format::ApiKind;
  const uint64_t parent = Value(d.parentObj);
  switch (type) {
    case abi::kGroupApi:
      return StartApi(ctx, ApiArgs{ApiKind::kGroupApi, nullptr, nullptr, 0, 0, 0, -1,
                                   d.groupApi.groupDepth, d.groupApi.graphCaptured});
    case abi::kCollApi:
      return StartApi(ctx, ApiArgs{ApiKind::kCollApi, d.collApi.func, d.collApi.datatype,
                                   d.collApi.count, Value(d.collApi.stream), parent,
                                   d.collApi.root, 0, d.collApi.graphCaptured});
    case abi::kP2pApi:
      return StartApi(ctx, ApiArgs{ApiKind::kP2pApi, d.p2pApi.func, d.p2pApi.datatype,
                                   d.p2pApi.count, Value(d.p2pApi.stream), parent, -1, 0,
                                   d.p2pApi.graphCaptured});
    case abi::kKernelLaunch:
      return StartApi(ctx, ApiArgs{ApiKind::kKernelLaunch, nullptr, nullptr, 0,
                                   Value(d.kernelLaunch.stream), parent, -1, 0, false});
    default:
      return nullptr;
  }
}

inline constexpr uint64_t kApiTypes = abi::kGroupApi | abi::kCollApi | abi::kP2pApi | abi::kKernelLaunch;

template <int V, typename Descr>
abi::Result StartEvent(void* context, void** handle, Descr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // NCCL keeps whatever we leave here: never leave it stale
  if (context == nullptr || d == nullptr) return abi::kSuccess;
  Context& ctx = *static_cast<Context*>(context);
  const uint64_t type = d->type;
  const void* api_parent = V >= 5 ? d->parentObj : nullptr;
  if (type == abi::kColl) {
    *handle = StartColl(ctx, ToCollArgs(d->coll, api_parent));
  } else if (type == abi::kP2p) {
    *handle = StartP2p(ctx, ToP2pArgs(d->p2p, api_parent));
  } else if (type & (abi::kKernelCh | abi::kProxyOp | abi::kProxyStep)) {
    *handle = StartChildEvent(ctx, *d, type);
  } else {
    if constexpr (V >= 5) {
      if (type & kApiTypes) *handle = StartApiEvent(ctx, *d, type);
    }
    if constexpr (V >= 7) {
      if (type == abi::kKernelPhase)
        *handle = StartKernelPhase(ctx, Value(d->parentObj), d->kernelPhase.phaseId, d->kernelPhase.pTimer);
    }
    if constexpr (V >= 6) {
      if (type == abi::kCeColl)
        *handle = StartCeColl(ctx, CeCollArgs{d->ceColl.func, d->ceColl.datatype, d->ceColl.count,
                                              d->ceColl.seqNumber, d->ceColl.root, Value(d->parentObj),
                                              UserTag(d->ceColl)});
    }
  }
  return abi::kSuccess;  // Group, ProxyCtrl, NetPlugin, CeSync, CeBatch: not recorded
}

}  // namespace commlens::recorder::adapter
