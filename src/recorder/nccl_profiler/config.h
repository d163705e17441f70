// Recorder settings, read once from the environment when a recording session starts
// (the first communicator's init). Each variable is documented in docs/recorder.md;
// defaults live here and nowhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/launch_env.h"
#include "native_format/format.h"
#include "recorder/cupti_tracer/cupti_kinds.h"

namespace commlens::recorder {

using native_format::EventBit;
using native_format::EventKind;

// What is recorded by default: ops, network proxy activity, the API-level events and the
// kernel launches. ProxyCtrl, NetPlugin and the CE sync/batch events are not. NCCL's
// per-channel kernel events (kernel) are not either: each op is timed by CUDA events
// around its kernel's launch (recorder/launch_timer), which costs the job far less; the
// plugin asks for them instead when the launches cannot be timed.
inline constexpr uint32_t kDefaultEventMask =
    EventBit(EventKind::kColl) | EventBit(EventKind::kP2p) |
    EventBit(EventKind::kProxyOp) | EventBit(EventKind::kProxyStep) |
    EventBit(EventKind::kGroupApi) | EventBit(EventKind::kCollApi) |
    EventBit(EventKind::kP2pApi) | EventBit(EventKind::kKernelLaunch) |
    EventBit(EventKind::kCeColl);
// Outside the capture window NCCL still reports Coll and P2p starts, so every rank keeps
// numbering its ops (OpRecord::comm_seq) the same way.
inline constexpr uint32_t kCountOnlyMask = EventBit(EventKind::kColl) | EventBit(EventKind::kP2p);

struct RecorderConfig {
  std::string out = "commlens-trace";  // COMMLENS_OUT: folder, or a file path (see docs)
  uint32_t flush_interval_ms = 1000;   // COMMLENS_FLUSH_INTERVAL_MS
  uint32_t buffer_events = 16384;      // COMMLENS_BUFFER_EVENTS: slots per pool and comm
  uint32_t event_mask = kDefaultEventMask;  // COMMLENS_EVENT_MASK
  // COMMLENS_KERNEL_SAMPLE: per-channel kernel timing for 1 op in N (1: every op). The
  // plugin switches the KernelCh bit of NCCL's activation mask as ops start; the others
  // keep host times only (the importer flags them kCommNoGpuTiming).
  uint32_t kernel_sample = 1;
  uint64_t capture_after_colls = 0;    // COMMLENS_CAPTURE_AFTER_COLLS
  double capture_after_s = 0;          // COMMLENS_CAPTURE_AFTER_S
  double capture_duration_s = 0;       // COMMLENS_CAPTURE_DURATION_S, 0 = to the end
  std::string control_path;            // COMMLENS_CONTROL
  uint32_t control_poll_ms = 20;       // COMMLENS_CONTROL_POLL_MS
  bool fsync = false;                  // COMMLENS_FSYNC
  // COMMLENS_CUPTI=1: the CUPTI tracer records the GPU's kernels, copies and CUDA calls
  // into the same file (recorder/cupti_tracer; experimental, off by default until it has
  // been measured on a GPU).
  bool cupti = false;
  std::string cupti_library;  // COMMLENS_CUPTI_LIBRARY: libcupti's path (default: the loader's search)
  uint32_t cupti_kinds = cupti::kDefaultCuptiKinds;  // COMMLENS_CUPTI_KINDS (cupti_kinds.h)
  // COMMLENS_LAUNCH_TIMING: "events" (the default) times each NCCL kernel by CUDA events
  // put on its stream around its launch; "off" does not.
  bool launch_timing = true;
  // COMMLENS_CUDA_DRIVER: the CUDA driver library the launch timer calls (libcuda.so.1,
  // the one the job loaded, by default; tests name a stand-in).
  std::string cuda_driver;
  // Without COMMLENS_EVENT_MASK, NCCL's ops are timed without its per-channel kernel
  // events (most of the recorder's cost): by the launch timer, or by the CUPTI tracer's
  // kernel records. The plugin asks for the kernel events when neither times them (off,
  // or unable).
  bool kernel_events_replaced = false;

  // Who this process is, from the launcher's environment (torchrun, Open MPI, PMI, Slurm,
  // PMIx) and COMMLENS_JOB_ID, by the rules of common/launch_env.h.
  int global_rank = -1;
  int world_size = 0;
  int local_rank = -1;
  std::string job_id;

  std::vector<std::string> warnings;  // values that could not be used, for the log

  bool has_capture_window() const {
    return capture_after_colls > 0 || capture_after_s > 0 || capture_duration_s > 0;
  }
};

// The plugin passes getenv; `commlens record` the environment it gives the job.
using EnvLookup = launch_env::EnvLookup;
RecorderConfig ParseConfig(const EnvLookup& env);

// "coll,kernel,proxy" or a number (decimal or 0x...); false if a word is unknown.
bool ParseEventMask(const std::string& text, uint32_t* mask);

}  // namespace commlens::recorder
