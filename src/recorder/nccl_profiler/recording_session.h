// The recording session: everything the plugin holds for the whole process. NCCL's ABI
// gives stopEvent nothing but the event handle, so one process-wide object has to find
// a handle's communicator; this is it, and nothing else in the plugin is global.
//
// A session starts at the first communicator's init (settings are read from the
// environment then, the trace file is opened, the flusher thread starts) and ends at
// the last communicator's finalize or at process exit, whichever comes first. A later
// init starts a new session with a new file.
//
// With the CUPTI tracer asked for, the plugin may also be CUDA's injection library
// (cuda_injection.cc): the process's session then starts when it initializes CUDA, so
// that a job without NCCL gets its kernels too, and NCCL's first init joins it (the file
// then says which profiler ABI NCCL speaks). Such a session ends at process exit only,
// and its file is made once it has something to hold: a kernel or a communicator.
//
// Lifetime: the one Session is never destroyed (TheSession). NCCL holds raw Context
// pointers and tokens naming them, and its threads may call in until the process is
// gone, also while exit() runs destructors; so process exit (an atexit handler) ends the
// session, flushing and writing the End record, and frees nothing. Only the last
// finalize, after which NCCL makes no call for those communicators, frees contexts.
//
// Recording state: events are recorded while the capture window is open and the control
// file (if any) says on (`1`) or host times only (`h`: no GPU timing, no launch events,
// the tracer paused). Outside that, the activation mask NCCL reads is cut to Coll and
// P2p only, so every rank keeps numbering its ops; "off" in the control file clears it.
//
// Threading: the hot path reads |recording_|, the registry and the mask with relaxed or
// acquire loads and never locks. |lifecycle_mu_| serializes init, finalize and exit;
// |mu_| guards the contexts, the serializer and its record buffers, and is taken by
// init/finalize and by each flush to serialize and queue records, never across a disk
// write (TraceFile; order: lifecycle_mu_, mu_, then the file's locks). The flusher owns
// the control and window bookkeeping.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "native_format/format.h"
#include "native_format/record_writer.h"
#include "recorder/nccl_profiler/abi/profiler_abi.h"
#include "recorder/nccl_profiler/config.h"
#include "recorder/nccl_profiler/context.h"
#include "recorder/nccl_profiler/serializer.h"
#include "recorder/nccl_profiler/token.h"
#include "recorder/cupti_tracer/tracer.h"
#include "recorder/launch_timer/launch_timer.h"
#include "recorder/nccl_profiler/trace_file.h"

namespace commlens::recorder {

class Session {
 public:
  Session() = default;
  ~Session() = delete;  // never destroyed: see the top of this file
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers a communicator; starts the session first if none is running. |supported|
  // is the event mask of the ABI version NCCL loaded us through. On success stores the
  // activation mask NCCL must use and returns the new context.
  abi::Result Init(const CommParams& params, int* activation_mask, uint32_t supported,
                   abi::Logger log, Context** out);
  // The session of a process whose CUDA loaded the plugin as its injection library
  // (CUDA_INJECTION64_PATH) and asked for the tracer (COMMLENS_CUPTI=1); nothing
  // otherwise, or when a session already runs.
  void StartWithCuda();
  // Queues the communicator's last events and retires it; the last one ends the session
  // (not one CUDA started).
  void Finalize(Context* ctx);
  // The atexit handler (registered by the first session, and again once the tracer has
  // loaded CUPTI; the second run does nothing): ends a running session as the last
  // finalize would, but keeps every context, and refuses later inits.
  void OnProcessExit();

  // Hot path.
  Context* ContextAt(uint32_t index) const {
    return registry_[index].load(std::memory_order_acquire);
  }
  bool recording() const { return recording_.load(std::memory_order_relaxed); }
  void OnCollSeen() {
    if (count_trigger_) CountTowardsWindow();
  }
  // Every op start (coll or p2p): with COMMLENS_KERNEL_SAMPLE = N > 1, switches NCCL's
  // KernelCh bit so that about 1 op in N gets kernel timing. NCCL reads the mask when an
  // API call starts, so this op's count decides the next op's timing.
  void OnOpStarted() {
    if (kernel_sample_.load(std::memory_order_relaxed) > 1) SampleKernels();
  }
  int pid() const { return pid_; }
  // A KernelLaunch event's start and stop (recorder/launch_timer): CUDA events on the
  // launch stream around NCCL's kernel. Begin returns the slot End takes, or kNone.
  // (With the control file at `h`, NCCL's mask has no launch events: no call comes here.)
  uint32_t TimeLaunchBegin(uint64_t stream, launch_timer::LaunchTimer::Capture capture) {
    return launch_timer_ ? launch_timer_->Begin(stream, capture) : launch_timer::LaunchTimer::kNone;
  }
  void TimeLaunchEnd(uint32_t slot, uint64_t api_id) {
    if (launch_timer_ && slot != launch_timer::LaunchTimer::kNone) launch_timer_->End(slot, api_id);
  }

 private:
  enum Window : int { kBefore, kOpen, kClosed };
  // The control file's first byte, in this order (PollControl's "10ch", EmitMarksLocked's
  // marks): 1, 0, c, h (recording with host times only: no GPU timing of NCCL's ops and the
  // CUPTI tracer paused, to see what GPU timing costs).
  enum Control : int { kControlOn, kControlOff, kControlCountOnly, kControlHostOnly };

  // |abi_version| 0: started by CUDA, no NCCL yet (JoinLocked brings it in).
  abi::Result StartLocked(int abi_version, uint32_t supported, abi::Logger log);
  void StartWindow(int64_t now_mono);
  void JoinLocked(int abi_version, uint32_t supported, abi::Logger log);
  void SetNcclMasks(int abi_version, uint32_t supported);
  // Once; |again_after_cupti|: a second time (once), after the tracer has loaded CUPTI, so
  // that the session ends before CUPTI's teardown (exit handlers run newest first).
  void RegisterExitHandler(bool again_after_cupti = false);
  void StopSession(native_format::EndReason reason);
  void StopFlusher();
  void SampleKernels();
  uint32_t RecordingMask() const;
  void ReleaseContexts();
  std::string TracePath() const;
  bool OpenFile();
  void QueueProcessRecord(bool file_start);
  void FlusherLoop();
  void Flush();
  void SerializeLocked(bool final);
  void QueueLocked();
  void WriteQueued();
  void CountTowardsWindow();
  void OpenWindow();
  void UpdateWindow(int64_t now_mono);
  void PollControl();
  void ApplyRecordingState();
  void EmitMarksLocked();
  void Log(abi::LogLevel level, const char* fmt, ...) const;

  std::mutex lifecycle_mu_;
  std::mutex mu_;
  bool running_ = false;
  std::atomic<bool> exit_handler_registered_{false}, exit_handler_after_cupti_{false};
  bool exited_ = false;  // the process is exiting: no new session
  int session_number_ = 0;
  int pid_ = 0;
  std::atomic<bool> cuda_started_{false};  // by CUDA's injection (StartWithCuda): ends at exit only
  RecorderConfig cfg_;
  std::atomic<abi::Logger> log_{nullptr};  // NCCL's; none before NCCL joins a CUDA-started session
  int abi_version_ = 0;  // 0 until NCCL's first init
  std::atomic<uint32_t> full_mask_{0};  // the flusher adds the kernel events back if CUPTI does not trace
  uint32_t supported_mask_ = 0;
  // cfg_.kernel_sample, copied for the hot path; set again when NCCL joins a CUDA-started
  // session, while the flusher reads it
  std::atomic<uint32_t> kernel_sample_{1};
  std::atomic<uint64_t> ops_started_{0};  // for the kernel sampling
  std::atomic<int64_t> start_mono_ns_{0};  // the capture window counts from here (again when NCCL joins)
  int64_t start_real_ns_ = 0;  // progress before the first op (MarkRecord::last_progress_ns)

  // Output. The serializer and the record buffers are under mu_; the file has its own
  // locks; |path_| is set at session start only.
  std::string path_;
  TraceFile file_;
  Serializer serializer_;
  native_format::RecordWriter strings_;
  native_format::RecordWriter body_;

  // Communicators (contexts_ under mu_; the registry is read lock-free).
  std::array<std::atomic<Context*>, kMaxContexts> registry_{};
  std::vector<std::unique_ptr<Context>> contexts_;  // live and retired, freed at the last finalize
  // Registry indexes: each new one until all kMaxContexts are taken, then those of
  // finalized communicators, oldest first, with the generations a new occupant starts at
  // (Context::NextGenerationBase), so that a session whose communicators come and go
  // records them all, up to kMaxContexts alive at once.
  uint32_t next_index_ = 0;
  std::deque<uint32_t> retired_indexes_;
  std::array<uint32_t, kMaxContexts> generation_base_{};
  static constexpr uint64_t kMaxGenerationBase = UINT32_MAX / 2;
  uint32_t next_file_id_ = 0;  // CommRecord::comm, never reused within a file
  int live_contexts_ = 0;
  // The registry index and generation base for a new communicator; false when every
  // index is taken by a live one.
  bool TakeIndex(uint32_t* index, uint32_t* generation_base);

  // The CUPTI tracer (COMMLENS_CUPTI=1): started with the session, drained by each flush
  // before the session's own records, stopped at its end. Never freed, as the session:
  // CUPTI's threads may call into it until the process is gone.
  cupti::Tracer* tracer_ = nullptr;  // with its backend; made by the first session that asks
  // The tracer, when this session asked for it (COMMLENS_CUPTI=1); an earlier session's
  // stays made but idle.
  cupti::Tracer* ActiveTracer() const { return cfg_.cupti ? tracer_ : nullptr; }
  void StartTracer();
  void DrainTracer();
  // The launch timer (COMMLENS_LAUNCH_TIMING=events, the default): made by the first
  // session, never freed (NCCL's threads may be inside Begin at exit).
  launch_timer::LaunchTimer* launch_timer_ = nullptr;
  std::string launch_timer_driver_;  // the driver library it was made for
  // The timer's and the tracer's state below is the flusher's and, in a CUDA-started
  // session, also that of NCCL's init joining it: |timing_mu_| serializes the two.
  std::mutex timing_mu_;
  bool launches_timed_ = false;  // the timer started for this session
  bool tracer_tried_ = false;    // the tracer was tried for this session (under timing_mu_)
  void StartLaunchTimer();
  void CollectLaunches(bool final);
  // Neither the launch timer nor the tracer times NCCL's kernels: NCCL's kernel events do.
  void PutBackKernelEventsIfUntimed();
  void PauseTracerUnlessRecording();  // the flusher's: see StartTracer
  // The capture window is open and the control file says record: what recording() will
  // say once ApplyRecordingState has run.
  bool RecordingWanted() const;
  // Recording with GPU activity: not with host times only (control `h`).
  bool TracerWanted() const;

  // Flusher thread (a pointer, so a forked child can let go of its parent's).
  std::unique_ptr<std::thread> flusher_;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_flusher_ = false;  // under wake_mu_

  // Recording state.
  std::atomic<bool> recording_{false};
  std::atomic<int*> mask_ptr_{nullptr};
  std::atomic<int> window_{kOpen};
  std::atomic<int> control_{kControlOn};
  bool count_trigger_ = false;  // capture_after_colls > 0; fixed while running
  std::atomic<bool> colls_reached_{false};
  std::atomic<uint64_t> total_colls_{0};
  std::atomic<int64_t> window_open_mono_ns_{0};
  std::atomic<int64_t> window_open_real_ns_{0};
  std::atomic<int64_t> window_close_real_ns_{0};
  std::atomic<uint64_t> seq_gaps_{0};
  int64_t control_change_real_ns_ = 0;  // flusher: when the control file last changed state
  int logged_window_ = kOpen;           // under mu_: last state written as a Mark
  int logged_control_ = kControlOn;
};

// Storage for an object built when the library is loaded and never destroyed: its
// destructor is trivial, so nothing runs for it at exit or unload.
template <typename T>
class NoDestructor {
 public:
  NoDestructor() { new (storage_) T(); }
  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

// The one instance, defined in recording_session.cc.
extern NoDestructor<Session> g_session;
inline Session& TheSession() { return g_session.get(); }

}  // namespace commlens::recorder
