// What a slot holds while its event is open, one struct per pool (token.h). Plain data:
// strings are NCCL's own static names (ncclFuncToString and friends return literals),
// kept as pointers here and interned by the flusher, off the hot path.
#pragma once

#include <cstdint>

#include "native_format/format.h"

namespace commlens::recorder {

struct OpData {
  uint64_t api_id;
  uint64_t count;
  uint64_t nccl_seq;
  uint64_t comm_seq;
  int64_t host_start_ns;
  int64_t host_stop_ns;
  const char* func;
  const char* dtype;
  const char* algo;
  const char* proto;
  const char* kernel_variant;  // v7, else null
  uint64_t user_tag;           // v7, else 0
  uint64_t op_id;  // its own token
  int32_t root_or_peer;
  native_format::OpKind kind;
  uint8_t channels;
  uint8_t warps;
  uint8_t flags;
};

struct ApiData {
  uint64_t api_id;
  uint64_t parent_id;
  uint64_t count;
  uint64_t stream;
  int64_t host_start_ns;
  int64_t host_stop_ns;
  int64_t group_start_stop_ns;
  int64_t group_end_start_ns;
  const char* func;
  const char* dtype;
  int32_t root;
  int32_t group_depth;
  uint32_t launch_slot;  // KernelLaunch: the launch timer's slot (LaunchTimer::kNone if untimed)
  native_format::ApiKind kind;
  uint8_t graph_captured;
};

// One kernel channel of one op. |*_obs_ns| is the host time at which NCCL's proxy thread
// handed us the GPU timestamp: always after the GPU wrote it. Its barrier phases (ABI v7,
// when asked for: initial sync, compute, final sync) are folded in, GPU timestamps too.
struct KernelData {
  uint64_t op_id;
  uint64_t start_ptimer;
  uint64_t stop_ptimer;  // 0 until KernelChStop
  int64_t start_obs_ns;
  int64_t stop_obs_ns;
  uint64_t phase_start[native_format::kKernelPhases];  // 0 when the phase did not start
  uint64_t phase_stop[native_format::kKernelPhases];   // 0 until KernelPhaseStop
  uint8_t channel;
};

// Proxy-step wait categories (ProxyOpRecord's wait columns).
enum class WaitKind : uint8_t { kNone, kNet, kGpu, kPeer };

struct ProxyOpData {
  uint64_t op_id;
  int64_t host_start_ns;
  int64_t host_stop_ns;
  int64_t first_step_start_ns;
  int64_t last_step_stop_ns;
  uint64_t bytes;
  uint64_t wait_ns[4];  // by WaitKind
  int32_t peer;
  int32_t steps;
  int32_t chunk_size;
  int32_t steps_done;
  uint8_t channel;
  uint8_t is_send;
  uint8_t flags;
};

// A proxy step is folded into its ProxyOp when it stops; its slot is then freed.
struct ProxyStepData {
  uint64_t proxy_op;  // parent token
  int64_t start_ns;
  int64_t mark_ns;    // time of the last state change
  uint64_t trans_size;
  uint64_t wait_ns[4];
  WaitKind current;
};

}  // namespace commlens::recorder
