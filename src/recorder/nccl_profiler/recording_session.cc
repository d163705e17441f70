#include "recorder/nccl_profiler/recording_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/strings.h"
#include "recorder/cupti_tracer/backend_factory.h"
#include "recorder/launch_timer/driver_events.h"
#include "recorder/launcher/output_names.h"
#include "recorder/nccl_profiler/clock.h"

#ifndef COMMLENS_VERSION
#define COMMLENS_VERSION "unknown"
#endif

namespace commlens::recorder {

namespace nf = native_format;

NoDestructor<Session> g_session;

namespace {

// mkdir -p. True if |dir| exists as a directory afterwards.
bool MakeDirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

RecorderConfig ConfigFromEnvironment() {
  return ParseConfig([](const char* name) -> const char* { return std::getenv(name); });
}

void StoreMask(int* mask, uint32_t value) {
  if (mask != nullptr) std::atomic_ref<int>(*mask).store(static_cast<int>(value), std::memory_order_relaxed);
}

}  // namespace

void Session::OnProcessExit() {
  std::lock_guard<std::mutex> lk(lifecycle_mu_);
  exited_ = true;  // a communicator created by another exit handler is not recorded
  // A forked child (a data-loader worker) inherits a running session whose flusher
  // thread and file belong to the parent: leave both alone.
  if (!running_ || getpid() != pid_) return;
  StopSession(nf::EndReason::kProcessExit);
}

abi::Result Session::Init(const CommParams& params, int* activation_mask, uint32_t supported,
                          abi::Logger log, Context** out) {
  std::lock_guard<std::mutex> lk(lifecycle_mu_);
  if (exited_) return abi::kInternalError;  // no flusher would outlive this exit
  if (!running_) {
    abi::Result r = StartLocked(params.abi_version, supported, log);
    if (r != abi::kSuccess) return r;
  } else if (abi_version_ == 0) {
    JoinLocked(params.abi_version, supported, log);
  }
  uint32_t index = 0, generation_base = 0;
  if (!TakeIndex(&index, &generation_base)) {
    Log(abi::kLogWarn, "commlens: more than %u communicators alive at once; not recording comm %llx",
        kMaxContexts, static_cast<unsigned long long>(params.hash));
    return abi::kInternalError;
  }
  auto ctx = std::make_unique<Context>(index, next_file_id_, params, RealtimeNs());
  if (!ctx->Allocate(cfg_, generation_base)) {
    retired_indexes_.push_front(index);  // not taken after all (its generations unused)
    Log(abi::kLogWarn, "commlens: cannot allocate event buffers for comm %llx",
        static_cast<unsigned long long>(params.hash));
    return abi::kSystemError;
  }
  Context* raw = ctx.get();
  {
    std::lock_guard<std::mutex> g(mu_);
    contexts_.push_back(std::move(ctx));
    registry_[index].store(raw, std::memory_order_release);
  }
  ++next_file_id_;
  ++live_contexts_;
  mask_ptr_.store(activation_mask, std::memory_order_relaxed);
  ApplyRecordingState();
  Log(abi::kLogInfo, "commlens: recording comm %llx (\"%s\", rank %d of %d) to %s",
      static_cast<unsigned long long>(params.hash), raw->name().c_str(), params.rank,
      params.nranks, path_.c_str());
  *out = raw;
  return abi::kSuccess;
}

bool Session::TakeIndex(uint32_t* index, uint32_t* generation_base) {
  if (next_index_ < kMaxContexts) {
    *index = next_index_++;
    *generation_base = 0;
    return true;
  }
  if (retired_indexes_.empty()) return false;
  *index = retired_indexes_.front();
  retired_indexes_.pop_front();
  *generation_base = generation_base_[*index];
  return true;
}

void Session::StartWithCuda() {
  std::lock_guard<std::mutex> lk(lifecycle_mu_);
  if (running_ || exited_) return;
  if (!ConfigFromEnvironment().cupti) return;
  if (StartLocked(0, 0, nullptr) != abi::kSuccess) return;
  // The tracer now, inside cuInit and on its thread, as CUDA's injection libraries are
  // meant to start CUPTI: no module is loaded yet (so it starts quickly), and no kernel of
  // the process comes before it. The flusher leaves it to this thread (cuda_started_):
  // were it to start CUPTI while this thread waited for it inside cuInit, each could wait
  // for the other.
  {
    std::lock_guard<std::mutex> t(timing_mu_);
    StartTracer();
  }
  // Then the exit handler, not when the flusher gets to it, so that a process that exits
  // at once still ends its session (and stops the flusher) before its libraries go. Exit
  // handlers run in reverse order: this one before CUPTI's own teardown, which loading it
  // registered (the session's end calls CUPTI: the other way round, a GPU run crashed at
  // exit), and before CUDA's runtime's; the driver's teardown is a library destructor,
  // after them all.
  RegisterExitHandler();
}

void Session::SetNcclMasks(int abi_version, uint32_t supported) {
  abi_version_ = abi_version;
  supported_mask_ = supported;
  full_mask_ = cfg_.event_mask & supported;
  // Also with the kernel bit the tracer's fallback may put back: sampling holds then too.
  kernel_sample_.store(cfg_.kernel_events_replaced || (full_mask_ & EventBit(EventKind::kKernelCh)) ? cfg_.kernel_sample : 1,
                       std::memory_order_relaxed);
}

abi::Result Session::StartLocked(int abi_version, uint32_t supported, abi::Logger log) {
  log_ = log;
  cfg_ = ConfigFromEnvironment();
  pid_ = getpid();
  cuda_started_ = abi_version == 0;
  SetNcclMasks(abi_version, supported);
  ops_started_.store(0);
  start_real_ns_ = RealtimeNs();
  next_index_ = 0;
  next_file_id_ = 0;
  retired_indexes_.clear();
  generation_base_.fill(0);
  live_contexts_ = 0;
  serializer_ = Serializer();
  seq_gaps_.store(0);
  total_colls_.store(0);
  colls_reached_.store(false);
  count_trigger_ = cfg_.capture_after_colls > 0;
  StartWindow(MonotonicNs());
  control_.store(kControlOn);
  if (!cfg_.control_path.empty()) PollControl();
  logged_window_ = window_.load();
  logged_control_ = control_.load();
  for (const std::string& w : cfg_.warnings) Log(abi::kLogWarn, "commlens: %s", w.c_str());

  if (!OpenFile()) return abi::kSystemError;
  launches_timed_ = false;
  tracer_tried_ = false;
  if (!cuda_started_) StartLaunchTimer();  // before the process record: it writes the mask the session uses
  QueueProcessRecord(true);
  WriteQueued();
  // The tracer is made here and started by the flusher, its first action: starting CUPTI
  // late can take seconds (it instruments the modules already loaded), and NCCL's init
  // should not wait for it. A session CUDA's init starts starts it at once (StartWithCuda).
  if (cfg_.cupti && !tracer_) tracer_ = new cupti::Tracer(cupti::NewCuptiBackend(cfg_.cupti_library, cfg_.cupti_kinds));
  // Each session's file names its launch streams (a later session keeps the tracer).
  if (cupti::Tracer* tracer = ActiveTracer())
    serializer_.on_launch_stream = [tracer](uint64_t stream) { tracer->NoteLaunchStream(stream); };
  stop_flusher_ = false;
  try {
    flusher_ = std::make_unique<std::thread>(&Session::FlusherLoop, this);
  } catch (...) {
    Log(abi::kLogWarn, "commlens: cannot start the flusher thread");
    file_.Close();
    return abi::kSystemError;
  }
  if (!cuda_started_) RegisterExitHandler();  // else StartWithCuda's
  running_ = true;
  return abi::kSuccess;
}

// The capture window, from |now_mono|: open at once, or waiting for its delay or count.
void Session::StartWindow(int64_t now_mono) {
  start_mono_ns_.store(now_mono);
  const bool wait_first = cfg_.capture_after_colls > 0 || cfg_.capture_after_s > 0;
  window_.store(wait_first ? kBefore : kOpen);
  window_open_mono_ns_.store(wait_first ? 0 : now_mono);
  window_open_real_ns_.store(0);
  window_close_real_ns_.store(0);
}

// NCCL's first init in a session CUDA started: NCCL's masks and the launch timer, the
// capture window counted from here (as in a session NCCL starts; a process without NCCL
// counts it from CUDA's init), and the process record again with NCCL's ABI and mask (a
// reader takes the last). Queued only: the flusher makes the file and writes it, so that
// NCCL's init never waits for the disk.
void Session::JoinLocked(int abi_version, uint32_t supported, abi::Logger log) {
  log_ = log;
  // Who the process is, as the launcher's variables say now (a program may set them after
  // initializing CUDA): the Process record below says it, and a file not made yet is named so.
  const RecorderConfig now = ConfigFromEnvironment();
  cfg_.global_rank = now.global_rank;
  cfg_.world_size = now.world_size;
  cfg_.local_rank = now.local_rank;
  cfg_.job_id = now.job_id;
  if (const std::string named = TracePath(); !named.empty() && named != path_ && file_.Retarget(named)) path_ = named;
  {
    std::lock_guard<std::mutex> t(timing_mu_);
    SetNcclMasks(abi_version, supported);
    StartLaunchTimer();
  }
  StartWindow(MonotonicNs());
  {
    std::lock_guard<std::mutex> g(mu_);
    logged_window_ = window_.load();  // a window restarted, not a transition to mark
  }
  file_.Needed();
  QueueProcessRecord(false);
}

// Once per process, and once more after the tracer has loaded CUPTI (|again_after_cupti|:
// exit handlers run newest first, and CUPTI's teardown, registered as it loaded, must come
// after the session's end, which calls CUPTI; OnProcessExit does nothing the second time).
// Exit handlers run before the destructors of libraries loaded earlier (NCCL's among
// them), so the logger and NCCL's mask are still there.
void Session::RegisterExitHandler(bool again_after_cupti) {
  if ((again_after_cupti ? exit_handler_after_cupti_ : exit_handler_registered_).exchange(true)) return;
  if (std::atexit([] { TheSession().OnProcessExit(); }) != 0)
    Log(abi::kLogWarn, "commlens: cannot register an exit handler; a job that exits without "
                       "finalizing NCCL loses its events since the last flush");
}

// Where this session's file goes: COMMLENS_OUT itself when it names a file, else
// <job>.rank<R>.<host>.<pid>[.s<N>].cltrace in that folder (made if missing; "" when it
// cannot be), the layout `commlens record` documents.
std::string Session::TracePath() const {
  const std::string& out = cfg_.out;
  struct stat st;
  const std::string_view suffix = launcher::kTraceSuffix;
  const bool is_file = EndsWith(out, suffix) || (stat(out.c_str(), &st) == 0 && !S_ISDIR(st.st_mode));
  if (is_file) {
    if (session_number_ > 0 && EndsWith(out, suffix))
      return out.substr(0, out.size() - suffix.size()) + ".s" + std::to_string(session_number_) + std::string(suffix);
    return out;
  }
  if (!MakeDirs(out)) {
    Log(abi::kLogWarn, "commlens: cannot create output folder %s: %s", out.c_str(), std::strerror(errno));
    return "";
  }
  return out + "/" + launcher::PluginTraceFileName(cfg_.job_id, cfg_.global_rank, HostName(), pid_, session_number_);
}

bool Session::OpenFile() {
  path_ = TracePath();
  if (path_.empty()) return false;
  if (cuda_started_) {
    file_.OpenWhenNeeded(path_);
    return true;
  }
  if (int error = file_.Open(path_); error != 0) {
    Log(abi::kLogWarn, "commlens: cannot open %s: %s", path_.c_str(), std::strerror(error));
    return false;
  }
  return true;
}

void Session::QueueProcessRecord(bool file_start) {
  std::lock_guard<std::mutex> g(mu_);
  if (file_start) strings_.AppendFileHeader();
  nf::ProcessRecord p{};
  p.start_realtime_ns = start_real_ns_;
  p.start_monotonic_ns = start_mono_ns_;
  p.pid = pid_;
  p.global_rank = cfg_.global_rank;
  p.world_size = cfg_.world_size;
  p.local_rank = cfg_.local_rank;
  p.hostname = serializer_.InternText(HostName(), strings_);
  p.job_id = serializer_.InternText(cfg_.job_id, strings_);
  p.plugin_version = serializer_.InternText("commlens " COMMLENS_VERSION, strings_);
  p.abi_version = static_cast<uint32_t>(abi_version_);
  p.event_mask = full_mask_;
  p.buffer_events = cfg_.buffer_events;
  p.flush_interval_ms = cfg_.flush_interval_ms;
  body_.Append(nf::RecordType::kProcess, p);
  QueueLocked();
}

void Session::Finalize(Context* ctx) {
  if (ctx == nullptr) return;
  std::lock_guard<std::mutex> lk(lifecycle_mu_);
  if (!running_ || ctx->retired) return;  // the session already ended (process exit); finalized twice
  bool last = false;
  {
    // Queued only: the flusher writes it with its next flush (or the session's end does),
    // so finalize never waits for the disk.
    std::lock_guard<std::mutex> g(mu_);
    serializer_.SerializeContext(*ctx, seq_gaps_.load(), true, strings_, body_);
    QueueLocked();
    ctx->retired = true;
    registry_[ctx->index()].store(nullptr, std::memory_order_release);
    // Its index for a later communicator, unless the generations a new one would start at
    // leave it too few before they wrap (and repeat ids in the file): then never again.
    if (const uint64_t next = ctx->NextGenerationBase(); next <= kMaxGenerationBase) {
      generation_base_[ctx->index()] = static_cast<uint32_t>(next);
      retired_indexes_.push_back(ctx->index());
    }
    ctx->FreePools();  // drained above; its Context stays (NCCL may still hold the pointer)
    last = --live_contexts_ == 0;
  }
  if (!last) return;
  if (!cuda_started_) return StopSession(nf::EndReason::kFinalize);
  // A session CUDA started goes on recording the GPU until exit. NCCL makes no more call
  // for these communicators: their buffers go, and NCCL's mask is no longer written.
  mask_ptr_.store(nullptr);
  ReleaseContexts();
}

// Called with lifecycle_mu_ held and mu_ free (the flusher may need it to finish).
void Session::StopSession(nf::EndReason reason) {
  StopFlusher();
  {
    std::lock_guard<std::mutex> g(mu_);
    recording_.store(false, std::memory_order_relaxed);
    StoreMask(mask_ptr_.load(), 0);
    SerializeLocked(true);  // before the tracer stops: the last launches name their streams
  }
  CollectLaunches(true);  // NCCL launches nothing more: the mask is 0
  if (cupti::Tracer* tracer = ActiveTracer()) {
    tracer->Stop();
    DrainTracer();
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    nf::EndRecord end{};
    end.time_ns = RealtimeNs();
    end.reason = static_cast<uint32_t>(reason);
    body_.Append(nf::RecordType::kEnd, end);
    QueueLocked();
  }
  WriteQueued();
  file_.Close();
  running_ = false;
  ++session_number_;
  // After the last finalize NCCL makes no call for these communicators. At process exit
  // its threads may still call in: the contexts stay, as the session does.
  if (reason == nf::EndReason::kFinalize) ReleaseContexts();
}

void Session::StopFlusher() {
  {
    std::lock_guard<std::mutex> w(wake_mu_);
    stop_flusher_ = true;
  }
  wake_.notify_all();
  if (flusher_ && flusher_->joinable()) flusher_->join();
  flusher_.reset();
}

void Session::ReleaseContexts() {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& slot : registry_) slot.store(nullptr, std::memory_order_release);
  contexts_.clear();
}

void Session::FlusherLoop() {
  {
    std::lock_guard<std::mutex> t(timing_mu_);
    if (!tracer_tried_ && !cuda_started_) {  // first, here (see StartLocked); StartWithCuda's own
      StartTracer();
      // Once more after CUPTI's load registered its teardown, so that ours runs first.
      if (ActiveTracer() != nullptr) RegisterExitHandler(/*again_after_cupti=*/true);
    }
  }
  const int64_t interval_ns = int64_t{cfg_.flush_interval_ms} * 1'000'000;
  const int64_t poll_ns = int64_t{cfg_.control_poll_ms} * 1'000'000;
  constexpr int64_t kWindowPollNs = 20'000'000;
  // The launch timer's finished launches are collected with each file write, and in
  // between when its slots fill (LaunchTimer::Crowded, looked at every 100 ms): they hold
  // under a second of a launch-dense job's launches, and a launch finding none free goes
  // untimed. Collecting no more often than that keeps the flusher's CUDA calls, which
  // share the driver's locks with the job's launches, few.
  constexpr int64_t kLaunchCollectNs = 100'000'000;
  int64_t next_flush = MonotonicNs() + interval_ns;
  int64_t next_collect = MonotonicNs() + kLaunchCollectNs;
  std::unique_lock<std::mutex> lk(wake_mu_);
  while (!stop_flusher_) {
    int64_t now = MonotonicNs();
    int64_t deadline = std::min(next_flush, next_collect);
    if (!cfg_.control_path.empty()) deadline = std::min(deadline, now + poll_ns);
    if (cfg_.has_capture_window() && window_.load() != kClosed)
      deadline = std::min(deadline, now + kWindowPollNs);
    wake_.wait_for(lk, std::chrono::nanoseconds(std::max<int64_t>(deadline - now, 0)),
                   [this] { return stop_flusher_; });
    if (stop_flusher_) break;
    lk.unlock();
    now = MonotonicNs();
    if (!cfg_.control_path.empty()) PollControl();
    UpdateWindow(now);
    // The tracer on before NCCL's events, and NCCL's events off before the tracer: a launch
    // the file holds then has its kernel there too (the reader pairs them by stream order).
    // With host times only, NCCL's launch events are off with the tracer (RecordingMask).
    if (TracerWanted()) {
      PauseTracerUnlessRecording();
      ApplyRecordingState();
    } else {
      ApplyRecordingState();
      PauseTracerUnlessRecording();
    }
    if (now >= next_flush) {
      Flush();
      next_flush = now + interval_ns;
      next_collect = now + kLaunchCollectNs;
    } else if (now >= next_collect) {
      std::lock_guard<std::mutex> t(timing_mu_);
      if (launch_timer_ && launch_timer_->Crowded()) CollectLaunches(false);
      next_collect = now + kLaunchCollectNs;
    }
    lk.lock();
  }
}

// Serializes under mu_, writes outside it: init and finalize wait for the first only.
void Session::Flush() {
  {
    std::lock_guard<std::mutex> t(timing_mu_);
    DrainTracer();  // before the session's records: its flush still ends with the alive mark
    CollectLaunches(false);
  }
  if (!file_.needed()) return;  // a CUDA-started session with nothing to hold yet: no marks either
  {
    std::lock_guard<std::mutex> g(mu_);
    SerializeLocked(false);
  }
  WriteQueued();
}

// The tracer's records go to the file through the same queue, each drain whole. A
// backend that cannot start says why in the file (a Tracer record) and costs nothing.
void Session::StartTracer() {
  cupti::Tracer* tracer = ActiveTracer();
  const bool tracing = tracer != nullptr && tracer->Start();
  tracer_tried_ = true;
  if (tracer != nullptr && !tracing) {
    Log(abi::kLogInfo, "commlens: the CUPTI tracer is not recording the GPU's activity");
    PutBackKernelEventsIfUntimed();  // its kernels were to time NCCL's ops
  }
  PauseTracerUnlessRecording();
}

// Switched off (control file) or outside the capture window, the tracer costs nothing
// either: CUPTI's kinds are disabled until the recording is on again; with host times
// only (control `h`) too. Judged from the window and the control file themselves, not
// from recording(): the flusher may get here before the first Init has applied them.
void Session::PauseTracerUnlessRecording() {
  if (cupti::Tracer* tracer = ActiveTracer()) tracer->SetPaused(!TracerWanted());
}

bool Session::RecordingWanted() const {
  const int control = control_.load();
  return window_.load() == kOpen && (control == kControlOn || control == kControlHostOnly);
}

bool Session::TracerWanted() const { return window_.load() == kOpen && control_.load() == kControlOn; }

// NCCL's kernel events time the ops when neither the launch timer nor the CUPTI tracer
// can: the tracer is counted on until it has tried to start (the flusher starts it, or,
// in a session CUDA's init started, that init).
void Session::PutBackKernelEventsIfUntimed() {
  const cupti::Tracer* tracer = ActiveTracer();  // made after the timer starts: asked for, it counts
  const bool tracer_may_time = cfg_.cupti && (!tracer_tried_ || (tracer != nullptr && tracer->tracing()));
  if (!cfg_.kernel_events_replaced || launches_timed_ || tracer_may_time) return;
  full_mask_ |= EventBit(EventKind::kKernelCh) & supported_mask_;
  ApplyRecordingState();
}

// The launch timer starts with the session, or when NCCL joins a CUDA-started one, on
// NCCL's init thread (it only finds the driver's calls). When it cannot time launches and
// the tracer is not asked to, NCCL's kernel events time the ops, as before the timer.
void Session::StartLaunchTimer() {
  launches_timed_ = false;
  // The timer needs NCCL's KernelLaunch events (profiler ABI v5 and later, and asked for).
  if (!cfg_.launch_timing || !(full_mask_ & EventBit(EventKind::kKernelLaunch))) {
    if (launch_timer_) launch_timer_->Off();
    PutBackKernelEventsIfUntimed();
    return;
  }
  // Made once; again only for another driver library (tests name stand-ins): the one made
  // before stays, idle, as NCCL's threads may still hold it.
  if (!launch_timer_ || cfg_.cuda_driver != launch_timer_driver_) {
    launch_timer_ = new launch_timer::LaunchTimer(new launch_timer::DriverEvents(cfg_.cuda_driver));
    launch_timer_driver_ = cfg_.cuda_driver;
  }
  std::string why;
  launch_timer_->SetSample(cfg_.kernel_sample);
  launches_timed_ = launch_timer_->Start(&why);
  if (!launches_timed_) {
    Log(abi::kLogInfo, "commlens: NCCL's launches are not timed by CUDA events: %s", why.c_str());
    PutBackKernelEventsIfUntimed();
  }
}

// The launches whose kernels have finished, written with the flush; at the end, those
// still running are waited for a little (a kernel never ending keeps its host times).
void Session::CollectLaunches(bool final) {
  if (!launch_timer_ || !cfg_.launch_timing) return;
  nf::RecordWriter w;
  if (final) launch_timer_->Finish(RealtimeNs(), &w, 200'000'000);
  else launch_timer_->Collect(RealtimeNs(), &w);
  std::string why;
  if (launch_timer_->GaveUp(&why)) {
    Log(abi::kLogWarn, "commlens: NCCL's launches are not timed by CUDA events: %s", why.c_str());
    launches_timed_ = false;
    PutBackKernelEventsIfUntimed();
    launch_timer_->Collect(RealtimeNs(), &w);  // its state, said at once
  }
  if (!w.empty()) file_.Queue(w);
}

void Session::DrainTracer() {
  cupti::Tracer* tracer = ActiveTracer();
  if (!tracer) return;
  nf::RecordWriter w;
  const bool was_tracing = tracer->tracing();
  // NCCL kernels known to have run (the launch timer saw them end): CUPTI recorded them
  // too, unless another client took its buffers.
  tracer->Drain(RealtimeNs(), &w, launches_timed_ ? launch_timer_->timed() : 0);
  if (was_tracing && !tracer->tracing()) PutBackKernelEventsIfUntimed();  // another CUPTI client took over
  if (tracer->records() > 0) file_.Needed();  // the GPU ran something: a CUDA-started session's file is made
  if (!w.empty()) file_.Queue(w);
}

// Marks and the finished events of every live communicator, queued for the file. A
// periodic flush ends with the alive mark (the end record says it at the end), so that
// the newest one is the file's last record whenever no write is under way: the live
// metrics read it from there (launcher/rank_progress.h).
void Session::SerializeLocked(bool final) {
  EmitMarksLocked();
  const uint64_t gaps = seq_gaps_.load();
  int64_t last_progress = start_real_ns_;
  bool communicators = false;
  for (auto& ctx : contexts_) {
    if (!ctx->retired) serializer_.SerializeContext(*ctx, gaps, final, strings_, body_);
    last_progress = std::max(last_progress, ctx->last_progress_ns());
    communicators |= !ctx->retired;
  }
  if (!final) {
    nf::MarkRecord alive{};
    alive.time_ns = RealtimeNs();
    alive.what = static_cast<uint32_t>(nf::MarkKind::kAlive);
    // 0: no communicator, so no collective to wait for (a session CUDA started, before
    // NCCL's first init or after its last finalize).
    alive.last_progress_ns = communicators ? last_progress : 0;
    body_.Append(nf::RecordType::kMark, alive);
  }
  QueueLocked();
}

// Strings before the body: every string id is defined before its first use.
void Session::QueueLocked() {
  file_.Queue(strings_);
  file_.Queue(body_);
  strings_.Clear();
  body_.Clear();
}

void Session::WriteQueued() {
  if (int error = file_.Write(cfg_.fsync); error != 0) {
    // Never fail the job for its trace: say it once and stop writing.
    Log(abi::kLogWarn, "commlens: writing %s failed (%s); recording stops", path_.c_str(),
        std::strerror(error));
  }
}

void Session::CountTowardsWindow() {
  uint64_t n = total_colls_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n < cfg_.capture_after_colls || window_.load(std::memory_order_relaxed) != kBefore) return;
  colls_reached_.store(true, std::memory_order_relaxed);
  if (cfg_.capture_after_s <= 0) OpenWindow();
}

void Session::OpenWindow() {
  int expected = kBefore;
  if (!window_.compare_exchange_strong(expected, kOpen)) return;
  window_open_mono_ns_.store(MonotonicNs());
  window_open_real_ns_.store(RealtimeNs());
  ApplyRecordingState();
}

void Session::UpdateWindow(int64_t now_mono) {
  int w = window_.load();
  if (w == kBefore) {
    bool time_ok = cfg_.capture_after_s <= 0 ||
                   now_mono >= start_mono_ns_ + static_cast<int64_t>(cfg_.capture_after_s * 1e9);
    bool count_ok = !count_trigger_ || colls_reached_.load();
    if (time_ok && count_ok) OpenWindow();
  } else if (w == kOpen && cfg_.capture_duration_s > 0) {
    int64_t end = window_open_mono_ns_.load() + static_cast<int64_t>(cfg_.capture_duration_s * 1e9);
    if (now_mono >= end) {
      window_close_real_ns_.store(RealtimeNs());
      window_.store(kClosed);
    }
  }
}

void Session::PollControl() {
  int fd = open(cfg_.control_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char c = 0;
  ssize_t n = pread(fd, &c, 1, 0);
  close(fd);
  if (n != 1) return;
  const char* states = "10ch";  // Control's order
  const char* at = c != '\0' ? std::strchr(states, std::tolower(static_cast<unsigned char>(c))) : nullptr;
  if (at == nullptr) return;
  const int next = static_cast<int>(at - states);
  int prev = control_.exchange(next);
  if (prev != next) control_change_real_ns_ = RealtimeNs();
  if (prev != kControlOff && next == kControlOff) seq_gaps_.fetch_add(1);
}

// The kernel channels and their phases (ABI v7), on and off together under sampling.
constexpr uint32_t kKernelBits = EventBit(EventKind::kKernelCh) | EventBit(EventKind::kKernelPhase);

uint32_t Session::RecordingMask() const {
  // Sampling starts with the kernel bits off; SampleKernels turns them on for 1 op in N.
  // Host times only: the kernel bits off, and NCCL's launch events too, which the launch
  // timer and the tracer's stream-order pairing are for (a launch without its kernel in
  // the file would be paired with a later one).
  const uint32_t full = full_mask_.load(std::memory_order_relaxed);
  if (control_.load() == kControlHostOnly) return full & ~(kKernelBits | EventBit(EventKind::kKernelLaunch));
  return kernel_sample_.load(std::memory_order_relaxed) > 1 ? full & ~kKernelBits : full;
}

void Session::SampleKernels() {
  const uint64_t k = ops_started_.fetch_add(1, std::memory_order_relaxed) + 1;
  // ApplyRecordingState owns the mask outside the window and with host times only.
  if (!recording() || control_.load(std::memory_order_relaxed) == kControlHostOnly) return;
  const bool time_next = k % kernel_sample_.load(std::memory_order_relaxed) == 0;
  const uint32_t full = full_mask_.load(std::memory_order_relaxed);
  StoreMask(mask_ptr_.load(std::memory_order_relaxed), time_next ? full : full & ~kKernelBits);
}

void Session::ApplyRecordingState() {
  const int control = control_.load();
  const bool rec = RecordingWanted();
  uint32_t mask = rec ? RecordingMask() : control == kControlOff ? 0 : kCountOnlyMask;
  recording_.store(rec, std::memory_order_relaxed);
  StoreMask(mask_ptr_.load(), mask);
}

void Session::EmitMarksLocked() {
  const int w = window_.load();
  const int c = control_.load();
  auto mark = [this](nf::MarkKind what, int64_t when) {
    nf::MarkRecord m{};
    m.time_ns = when != 0 ? when : RealtimeNs();
    m.what = static_cast<uint32_t>(what);
    body_.Append(nf::RecordType::kMark, m);
  };
  // A window can open and close between two flushes: write both, in order.
  if (w != logged_window_ && logged_window_ == kBefore)
    mark(nf::MarkKind::kCaptureStart, window_open_real_ns_.load());
  if (w == kClosed && logged_window_ != kClosed)
    mark(nf::MarkKind::kCaptureStop, window_close_real_ns_.load());
  logged_window_ = w;
  if (c != logged_control_) {
    static constexpr nf::MarkKind kMarkOf[] = {nf::MarkKind::kControlOn, nf::MarkKind::kControlOff,
                                                nf::MarkKind::kControlCountOnly, nf::MarkKind::kControlHostOnly};
    mark(kMarkOf[c], control_change_real_ns_);
    logged_control_ = c;
  }
}

void Session::Log(abi::LogLevel level, const char* fmt, ...) const {
  const abi::Logger log = log_.load();
  // Before NCCL joins a CUDA-started session, warnings go to stderr.
  if (log == nullptr && !(cuda_started_ && level == abi::kLogWarn)) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (log == nullptr) std::fprintf(stderr, "%s\n", buf);
  else log(level, abi::kLogSubsysProfile, "commlens", 0, "%s", buf);
}

}  // namespace commlens::recorder
