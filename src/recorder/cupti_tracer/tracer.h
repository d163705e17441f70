// The CUPTI tracer's side of the rank's trace file: it takes what its backend delivers
// (activity_backend.h), names each string once, and holds the records until the
// recording session's flusher drains them into the file with its own, so the file keeps
// its one writer and its crash guarantee (a SIGKILL loses at most the last flush).
//
// The tracer's string ids live above kStringBase, apart from the session's serializer,
// so both can name strings in one file. A Tracer record (format.h) goes out with every
// drain that carries news: the state at start (tracing, or stepped aside and why), and
// the counters of records written and dropped.
//
// Threading: the On* calls come from the backend's threads, Drain from the flusher; one
// mutex guards the pending bytes and the string table. Strings are queued before the
// first record that names them, so a reader never meets an id before its text.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/strings.h"
#include "native_format/record_writer.h"
#include "recorder/cupti_tracer/activity_backend.h"

namespace commlens::recorder::cupti {

class Tracer final : public ActivitySink {
 public:
  static constexpr uint32_t kStringBase = 0x80000000u;
  // The longest name kept (a kernel's template name can run to kilobytes).
  static constexpr size_t kMaxName = 4096;
  static constexpr size_t kMaxStrings = 1 << 16;  // names remembered (see StringIdLocked)

  explicit Tracer(ActivityBackend* backend) : backend_(backend) {}
  ~Tracer() override = default;

  // Starts the backend for a new file (strings are named again); whether it traces (else
  // it stepped aside or failed, as the next drain's Tracer record says).
  bool Start();
  // Flushes the backend and moves every pending record into |into| (appended).
  // |nccl_kernels_done|: NCCL kernels known to have run so far in this file (the launch
  // timer saw them end; 0 when not known). A tracer that finds CUPTI taken by another
  // client since its start (a PyTorch profiler or Nsight Systems started later: another
  // subscriber; or kStalledDrains drains in a row without a record while kStallKernels NCCL
  // kernels or more ran, which CUPTI would have recorded, and none either after a forced
  // flush: periodic flushes take full buffers only) steps aside from then on: no
  // more calls into CUPTI, whose kinds and buffers are the other client's now, and a
  // Tracer record that says when and why. (Kernels that ran, not launches: in a hang,
  // launches queue up and nothing runs, CUPTI's records included.)
  void Drain(int64_t now_ns, native_format::RecordWriter* into, uint64_t nccl_kernels_done = 0);
  static constexpr int kStalledDrains = 3;
  static constexpr uint64_t kStallKernels = 16;
  // Stops the backend; the last records wait for the last Drain.
  void Stop();
  // Pauses or resumes the backend (activity_backend.h) when the recording is switched off
  // or on; nothing unless tracing. Called from one thread (the flusher).
  void SetPaused(bool paused);
  // A stream NCCL launched on (a KernelLaunch event's): the first time in this file, its
  // CUPTI id is written (a StreamId record), so that NCCL's kernels are found on it in
  // launch order without the CUDA calls. Not from inside a CUPTI callback.
  void NoteLaunchStream(uint64_t stream);

  bool tracing() const { return state_.load() == native_format::TracerState::kTracing; }
  uint64_t records() const;
  uint64_t dropped() const;

  // ActivitySink
  void OnGpuActivity(const native_format::GpuActivityRecord& record, std::string_view name) override;
  void OnCudaApi(const native_format::CudaApiRecord& record, std::string_view name) override;
  void OnRange(const native_format::RangeRecord& record, std::string_view name, std::string_view domain) override;
  void OnDropped(uint64_t records) override;

 private:
  uint32_t StringIdLocked(std::string_view text);  // 0 for empty text
  void LoseLocked(int64_t now_ns, std::string why);
  bool StallSuspectedLocked(uint64_t nccl_kernels_done);

  ActivityBackend* backend_;
  std::atomic<native_format::TracerState> state_{native_format::TracerState::kFailed};
  std::string why_;  // when not tracing
  std::atomic<bool> stopped_{false};
  bool paused_ = false;  // the flusher's

  mutable std::mutex mu_;
  native_format::RecordWriter pending_;             // under mu_
  std::unordered_map<std::string, uint32_t, StringViewHash, std::equal_to<>> ids_;  // under mu_
  uint32_t next_id_ = kStringBase;                  // under mu_
  uint64_t records_ = 0, dropped_ = 0;              // under mu_
  bool news_ = true;                                // under mu_: a Tracer record is due
  uint64_t reported_ = 0;                           // under mu_: records_ in the last Tracer record
  std::vector<uint64_t> streams_;                   // under mu_: launch streams named in this file
  uint64_t records_at_drain_ = 0, kernels_at_drain_ = 0;  // under mu_: at the last drain with records
  int stalled_drains_ = 0;                                  // under mu_
};

}  // namespace commlens::recorder::cupti
