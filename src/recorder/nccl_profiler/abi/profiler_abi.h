// Our declarations of the parts of the NCCL profiler plugin ABI that every version
// shares, written from NCCL's documented layout (plugins/profiler/README.md and the
// profiler_vN.h headers, read for facts). No NCCL header is included: the plugin builds
// and loads without NCCL or CUDA.
//
// Each header pins its structs with static_asserts on size and member offsets: the
// numbers are NCCL's C layout worked out for LP64 Linux (x86-64; aarch64 lays these
// types out alike), not what our compiler happened to produce. A member added, moved or
// retyped by mistake fails the build instead of reading the wrong bytes inside NCCL.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commlens::recorder::abi {

static_assert(sizeof(void*) == 8 && sizeof(int) == 4 && sizeof(size_t) == 8 && alignof(uint64_t) == 8 &&
                  sizeof(bool) == 1,
              "the profiler ABI layouts below are pinned for LP64 Linux");

// ncclResult_t is a C enum passed as int. A plugin only ever returns these.
enum Result : int { kSuccess = 0, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4 };

// ncclDebugLogLevel and the logger NCCL hands to init.
enum LogLevel : int { kLogNone = 0, kLogVersion = 1, kLogWarn = 2, kLogInfo = 3 };
inline constexpr unsigned long kLogSubsysProfile = 0x4000;  // NCCL_PROFILE
using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line,
                        const char* fmt, ...);

// Event type bits (the descriptor's |type| field and the activation mask). Each is
// 1 << format::EventKind of the same name.
inline constexpr uint64_t kGroup = 1u << 0;
inline constexpr uint64_t kColl = 1u << 1;
inline constexpr uint64_t kP2p = 1u << 2;
inline constexpr uint64_t kProxyOp = 1u << 3;
inline constexpr uint64_t kProxyStep = 1u << 4;
inline constexpr uint64_t kProxyCtrl = 1u << 5;
inline constexpr uint64_t kKernelCh = 1u << 6;
inline constexpr uint64_t kNetPlugin = 1u << 7;
inline constexpr uint64_t kGroupApi = 1u << 8;      // v5+
inline constexpr uint64_t kCollApi = 1u << 9;       // v5+
inline constexpr uint64_t kP2pApi = 1u << 10;       // v5+
inline constexpr uint64_t kKernelLaunch = 1u << 11; // v5+
inline constexpr uint64_t kCeColl = 1u << 12;       // v6
inline constexpr uint64_t kCeSync = 1u << 13;       // v6
inline constexpr uint64_t kCeBatch = 1u << 14;      // v6
inline constexpr uint64_t kKernelPhase = 1u << 15;  // v7: a kernel's barrier phases

// ncclProfilerEventState_t values (one enum shared by all versions).
enum State : int {
  kProxyStepSendGpuWait = 8,
  kProxyStepSendWait = 9,
  kProxyStepRecvWait = 10,
  kProxyStepRecvFlushWait = 11,
  kProxyStepRecvGpuWait = 12,
  kProxyOpInProgress = 19,
  kProxyStepSendPeerWait = 20,
  kNetPluginUpdate = 21,
  kKernelChStop = 22,
  kGroupStartApiStop = 23,
  kGroupEndApiStart = 24,
  kKernelPhaseStop = 31,  // v7 (its stop timer in kernelCh.pTimer)
};

// State arguments: the same union in v4 to v7 (v6 and v7 reuse v5's).
union StateArgs {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

// Descriptor members whose layout is the same in v4 to v7.
struct ProxyOpDescr {
  int32_t pid;  // pid_t of the process that issued it (PXN: another process)
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct ProxyStepDescr {
  int step;
};
struct KernelChDescr {
  uint8_t channelId;
  uint64_t pTimer;  // GPU %globaltimer at the channel's start, ns
};
struct NetPluginDescr {
  int64_t id;
  void* data;
};

static_assert(sizeof(Result) == 4 && sizeof(LogLevel) == 4 && sizeof(State) == 4);  // C enums

// ncclProfilerEventStateArgs_v4_t (v5, v6 and v7 reuse it).
static_assert(sizeof(StateArgs) == 8);
static_assert(offsetof(StateArgs, proxyStep.transSize) == 0 && offsetof(StateArgs, proxyCtrl.appendedProxyOps) == 0 &&
              offsetof(StateArgs, netPlugin.data) == 0 && offsetof(StateArgs, kernelCh.pTimer) == 0);

// The proxyOp, proxyStep, kernelCh and netPlugin members of the descriptor union.
static_assert(sizeof(ProxyOpDescr) == 24);
static_assert(offsetof(ProxyOpDescr, pid) == 0 && offsetof(ProxyOpDescr, channelId) == 4 &&
              offsetof(ProxyOpDescr, peer) == 8 && offsetof(ProxyOpDescr, nSteps) == 12 &&
              offsetof(ProxyOpDescr, chunkSize) == 16 && offsetof(ProxyOpDescr, isSend) == 20);
static_assert(sizeof(ProxyStepDescr) == 4 && offsetof(ProxyStepDescr, step) == 0);
static_assert(sizeof(KernelChDescr) == 16);
static_assert(offsetof(KernelChDescr, channelId) == 0 && offsetof(KernelChDescr, pTimer) == 8);
static_assert(sizeof(NetPluginDescr) == 16);
static_assert(offsetof(NetPluginDescr, id) == 0 && offsetof(NetPluginDescr, data) == 8);

// The exported table (ncclProfiler_vN): the same six members in every version; the
// descriptor type and init's arguments differ.
template <typename Descr, typename InitFn>
struct ProfilerTable {
  const char* name;
  InitFn init;
  Result (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, State eState, StateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

// NCCL's ncclProfiler_vN_t layout, which every version's table must have.
template <typename Table>
constexpr bool HasTableLayout() {
  return sizeof(Table) == 48 && offsetof(Table, name) == 0 && offsetof(Table, init) == 8 &&
         offsetof(Table, startEvent) == 16 && offsetof(Table, stopEvent) == 24 &&
         offsetof(Table, recordEventState) == 32 && offsetof(Table, finalize) == 40;
}

}  // namespace commlens::recorder::abi
