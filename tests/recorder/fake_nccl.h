// A stand-in for NCCL that drives the built profiler plugin through its exported ABI
// tables, in the order NCCL's src/plugin/profiler.cc makes the calls: API events and the
// Group/Coll enqueue events on the calling thread, then the kernel-channel and proxy
// events the proxy thread reports (KernelCh start, ProxyOp/ProxyStep with their states,
// KernelChStop with the GPU stop timer, stop). Like NCCL it honours the activation mask
// the plugin set, keeps handles in slots it never clears before a start, and calls stop
// and record only on non-NULL handles.
//
// Used by the plugin tests and the hot-path benchmark.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "recorder/nccl_profiler/abi/profiler_v4.h"
#include "recorder/nccl_profiler/abi/profiler_v5.h"
#include "recorder/nccl_profiler/abi/profiler_v6.h"
#include "recorder/nccl_profiler/abi/profiler_v7.h"

namespace commlens::testing {

namespace abi = recorder::abi;

// Reads NCCL's event mask as NCCL does: atomically (the plugin's flusher may store it).
inline int LoadMask(int* mask) { return std::atomic_ref<int>(*mask).load(std::memory_order_relaxed); }

// dlopen's the plugin once per process (NCCL does the same) and keeps it loaded.
inline void* PluginLibrary() {
  static void* lib = [] {
    void* h = dlopen(COMMLENS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", COMMLENS_PLUGIN_PATH, dlerror());
      std::abort();
    }
    return h;
  }();
  return lib;
}

template <int V> struct AbiOf;
template <> struct AbiOf<4> {
  using Profiler = abi::v4::Profiler;
  using Descr = abi::v4::EventDescr;
  static constexpr const char* kSymbol = "ncclProfiler_v4";
};
template <> struct AbiOf<5> {
  using Profiler = abi::v5::Profiler;
  using Descr = abi::v5::EventDescr;
  static constexpr const char* kSymbol = "ncclProfiler_v5";
};
template <> struct AbiOf<6> {
  using Profiler = abi::v6::Profiler;
  using Descr = abi::v6::EventDescr;
  static constexpr const char* kSymbol = "ncclProfiler_v6";
};
template <> struct AbiOf<7> {
  using Profiler = abi::v7::Profiler;
  using Descr = abi::v7::EventDescr;
  static constexpr const char* kSymbol = "ncclProfiler_v7";
};

struct FakeCollective {
  const char* func = "AllReduce";
  const char* dtype = "ncclFloat32";
  const char* algo = "RING";
  const char* proto = "SIMPLE";
  size_t count = 1024;
  int root = 0;
  uint64_t seq = 0;
  uint8_t channels = 2;
  uint64_t gpu_start = 1'000'000;  // earliest channel start, %globaltimer ns
  uint64_t gpu_duration = 1000;    // latest channel stop - gpu_start
  // > 0: the kernel waits this long (a peer is late) between its channels' starts and the
  // rest: the proxy's steps and the channels' stops. The calling thread waits with it.
  int64_t wait_us = 0;
  int proxy_steps = 0;             // > 0: one network ProxyOp with this many steps
  size_t step_bytes = 4096;
  uint64_t user_tag = 0;                 // v7
  const char* kernel_variant = nullptr;  // v7
  bool symmetric = false;                // v7
  // v7, a symmetric kernel with KernelPhase asked for: channel c's initial sync (its wait
  // for the peers) lasts this long plus c * 1000 ns; the final sync 100 ns; the compute
  // the rest.
  uint64_t initial_sync = 200;
  bool graph_captured = false;  // v5+: the call is being captured into a CUDA graph
  // v5+: the call says the opposite of its group (NCCL sets the group's flag from its first
  // call: a group spanning communicators whose streams differ).
  bool call_capture_differs = false;
};

struct FakeP2p {
  const char* func = "Send";
  const char* dtype = "ncclInt8";
  size_t count = 4096;
  int peer = 1;
  uint8_t channels = 1;
  uint64_t gpu_start = 1'000'000;
  uint64_t gpu_duration = 1000;
  uint64_t user_tag = 0;  // v7
};

template <int V>
class FakeNccl {
 public:
  using Descr = typename AbiOf<V>::Descr;
  static constexpr uint64_t kStale = 0x5a5a5a5a5a5a5a5aull;  // what a reused handle slot holds

  FakeNccl() : p_(static_cast<typename AbiOf<V>::Profiler*>(dlsym(PluginLibrary(), AbiOf<V>::kSymbol))) {}

  bool loaded() const { return p_ != nullptr; }
  const char* name() const { return p_->name; }

  // NCCL's init call for this version; |mask| plays NCCL's process-wide event mask.
  int Init(uint64_t hash, const char* comm_name, int nnodes, int nranks, int rank, int* mask) {
    mask_ = mask;
    rank_ = rank;
    if constexpr (V == 4) return p_->init(&context_, mask, comm_name, hash, nnodes, nranks, rank, nullptr);
    else return p_->init(&context_, hash, mask, comm_name, nnodes, nranks, rank, nullptr);
  }
  int Finalize() { return p_->finalize(context_); }
  void* context() const { return context_; }

  // Raw calls, as NCCL makes them.
  template <typename Fill>
  void* Start(uint64_t type, void* parent, Fill fill) {
    Descr d{};
    d.type = static_cast<decltype(d.type)>(type);
    d.parentObj = parent;
    d.rank = rank_;
    fill(d);
    void* handle = reinterpret_cast<void*>(kStale);
    p_->startEvent(context_, &handle, &d);
    return handle;
  }
  void Stop(void* h) {
    if (h != nullptr) p_->stopEvent(h);
  }
  void Record(void* h, abi::State state, abi::StateArgs* args) {
    if (h != nullptr) p_->recordEventState(h, state, args);
  }

  void Collective(const FakeCollective& c) {
    const uint64_t m = static_cast<uint64_t>(LoadMask(mask_));  // NCCL reads it once per API call
    void* group_api = nullptr;
    void* coll_api = nullptr;
    if constexpr (V >= 5) {
      if (m & (abi::kGroupApi | kBelowApi))
        group_api = Start(abi::kGroupApi, nullptr, [&](Descr& d) {
          d.groupApi.groupDepth = 1;
          d.groupApi.graphCaptured = c.graph_captured;
        });
      if (m & (abi::kCollApi | kBelowApi))
        coll_api = Start(abi::kCollApi, group_api, [&](Descr& d) {
          d.collApi.graphCaptured = c.graph_captured != c.call_capture_differs;
          d.collApi.func = c.func;
          d.collApi.count = c.count;
          d.collApi.datatype = c.dtype;
          d.collApi.root = c.root;
        });
      Stop(coll_api);
    }
    void* group = (m & kBelowApi) ? Start(abi::kGroup, nullptr, [](Descr&) {}) : nullptr;
    void* coll = nullptr;
    if (m & kBelowApi)
      coll = Start(abi::kColl, V >= 5 ? coll_api : group, [&](Descr& d) {
        d.coll.seqNumber = c.seq;
        d.coll.func = c.func;
        d.coll.count = c.count;
        d.coll.root = c.root;
        d.coll.datatype = c.dtype;
        d.coll.nChannels = c.channels;
        d.coll.nWarps = 16;
        d.coll.algo = c.algo;
        d.coll.proto = c.proto;
        if constexpr (V >= 5) d.coll.parentGroup = group;
        if constexpr (V >= 7) {
          d.coll.userTag = c.user_tag;
          d.coll.kernelVariant = c.kernel_variant;
          d.coll.isSymColl = c.symmetric;
        }
      });
    void* launch = nullptr;
    if constexpr (V >= 5) {
      if (m & abi::kKernelLaunch) launch = Start(abi::kKernelLaunch, group_api, [](Descr&) {});
    }
    Stop(launch);
    Stop(coll);
    Stop(group);
    Stop(group_api);
    // Like NCCL 2.31: only symmetric kernels have phases.
    const uint64_t sync = V >= 7 && c.symmetric && (m & abi::kKernelPhase) ? c.initial_sync : 0;
    ProxyThread(coll, m, c.channels, c.gpu_start, c.gpu_duration, c.proxy_steps, c.step_bytes, c.wait_us, sync);
  }

  void P2p(const FakeP2p& p) {
    const uint64_t m = static_cast<uint64_t>(LoadMask(mask_));
    void* api = nullptr;
    if constexpr (V >= 5) {
      if (m & (abi::kP2pApi | kBelowApi))
        api = Start(abi::kP2pApi, nullptr, [&](Descr& d) {
          d.p2pApi.func = p.func;
          d.p2pApi.count = p.count;
          d.p2pApi.datatype = p.dtype;
        });
      Stop(api);
    }
    void* group = (m & kBelowApi) ? Start(abi::kGroup, nullptr, [](Descr&) {}) : nullptr;
    void* op = nullptr;
    if (m & (abi::kP2p | kBelowApi))
      op = Start(abi::kP2p, V >= 5 ? api : group, [&](Descr& d) {
        d.p2p.func = p.func;
        d.p2p.datatype = p.dtype;
        d.p2p.count = p.count;
        d.p2p.peer = p.peer;
        d.p2p.nChannels = p.channels;
        if constexpr (V >= 5) d.p2p.parentGroup = group;
        if constexpr (V >= 7) d.p2p.userTag = p.user_tag;
      });
    Stop(op);
    Stop(group);
    ProxyThread(op, m, p.channels, p.gpu_start, p.gpu_duration, 0, 0);
  }

 private:
  // Event types that make NCCL emit the Coll/P2p level (children imply their parents).
  static constexpr uint64_t kBelowApi =
      abi::kColl | abi::kP2p | abi::kKernelCh | abi::kProxyOp | abi::kProxyStep;

  // Channel c starts c*10 ns after the earliest and stops c*10 ns before the latest.
  // |sync| > 0: each channel reports its barrier phases (KernelPhase, v7) before its stop.
  void ProxyThread(void* task, uint64_t m, int channels, uint64_t gpu_start, uint64_t duration,
                   int steps, size_t step_bytes, int64_t wait_us = 0, uint64_t sync = 0) {
    std::vector<void*> kernel(static_cast<size_t>(channels), nullptr);
    if (m & abi::kKernelCh) {
      for (int ch = 0; ch < channels; ++ch)
        kernel[ch] = Start(abi::kKernelCh, task, [&](Descr& d) {
          d.kernelCh.channelId = static_cast<uint8_t>(ch);
          d.kernelCh.pTimer = gpu_start + 10 * ch;
        });
    }
    if (wait_us > 0) usleep(static_cast<useconds_t>(wait_us));
    if (steps > 0 && (m & (abi::kProxyOp | abi::kProxyStep))) {
      void* op = Start(abi::kProxyOp, task, [&](Descr& d) {
        d.proxyOp.pid = static_cast<int32_t>(getpid());
        d.proxyOp.channelId = 0;
        d.proxyOp.peer = 1;
        d.proxyOp.nSteps = steps;
        d.proxyOp.chunkSize = static_cast<int>(step_bytes);
        d.proxyOp.isSend = 1;
      });
      for (int s = 0; s < steps && (m & abi::kProxyStep); ++s) {
        void* step = Start(abi::kProxyStep, op, [&](Descr& d) { d.proxyStep.step = s; });
        abi::StateArgs a{};
        a.proxyStep.transSize = step_bytes;
        Record(step, abi::kProxyStepSendGpuWait, &a);
        Record(step, abi::kProxyStepSendPeerWait, &a);
        Record(step, abi::kProxyStepSendWait, &a);
        Stop(step);
      }
      Stop(op);
    }
    for (int ch = 0; ch < channels; ++ch) {
      const uint64_t from = gpu_start + 10 * ch, to = gpu_start + duration - 10 * ch;
      if (sync > 0) {
        const uint64_t bounds[4] = {from, from + sync + 1000 * static_cast<uint64_t>(ch), to - 100, to};
        static constexpr const char* kNames[3] = {"initial_sync", "compute", "final_sync"};
        for (uint8_t phase = 0; phase < 3; ++phase) {
          void* h = Start(abi::kKernelPhase, kernel[ch], [&](Descr& d) {
            if constexpr (V >= 7) {
              d.kernelPhase.channelId = static_cast<uint8_t>(ch);
              d.kernelPhase.phaseId = phase;
              d.kernelPhase.phaseName = kNames[phase];
              d.kernelPhase.pTimer = bounds[phase];
            }
          });
          abi::StateArgs stop{};
          stop.kernelCh.pTimer = bounds[phase + 1];
          Record(h, abi::kKernelPhaseStop, &stop);
          Stop(h);
        }
      }
      abi::StateArgs a{};
      a.kernelCh.pTimer = to;
      Record(kernel[ch], abi::kKernelChStop, &a);
      Stop(kernel[ch]);
    }
  }

  typename AbiOf<V>::Profiler* p_;
  void* context_ = nullptr;
  int* mask_ = nullptr;
  int rank_ = 0;
};

}  // namespace commlens::testing
