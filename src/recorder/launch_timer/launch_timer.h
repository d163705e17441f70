// Every NCCL op timed on the GPU, cheaply (issue 28): the recorder puts a CUDA timing
// event on NCCL's launch stream just before each kernel launch (the plugin's KernelLaunch
// start) and one just after (its stop). The first completes when the stream reaches the
// kernel, the second when the kernel has finished, so the pair spans the kernel that ran
// the launch's ops. The flusher asks which pairs have completed and converts their GPU
// times to the host clock through an anchor: an event it records on a stream of its own
// and watches complete, timed on both clocks. Two event records per launch cost the
// launching thread about what a kernel launch costs, where NCCL's per-channel kernel
// events made the job itself slower (docs/performance.md).
//
// What is not timed (counted in the LaunchTimer record): launches captured into a CUDA
// graph (they run at replay; their events would join the graph), launches while every
// slot is in flight (kSlots), and pairs a CUDA call failed for.
//
// Threading: Begin and End run on the threads that launch NCCL's kernels; Collect, Start
// and Finish on the flusher. A slot is owned by its launching thread from Begin until End
// publishes it (kEnded), then by the flusher until it returns it to the free list.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "native_format/record_writer.h"
#include "recorder/launch_timer/gpu_events.h"

namespace commlens::recorder::launch_timer {

class LaunchTimer {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kSlots = 4096;                   // launches in flight at once
  static constexpr int64_t kAnchorWaitNs = 2'000'000;         // an anchor seen later is tried again
  static constexpr uint32_t kStringId = 0xC0000000u;          // the reason's string, apart from the others'

  explicit LaunchTimer(GpuEvents* events);
  ~LaunchTimer();  // makes no CUDA call: the process may be exiting

  // A new file: readies the driver's calls. False (|why| set, the state kFailed) when
  // launches cannot be timed; the caller then times NCCL's ops another way.
  bool Start(std::string* why);
  // Not timing for this file (asked off, or the CUPTI tracer times the kernels): says so
  // in the next Collect's LaunchTimer record.
  void Off();
  bool timing() const { return timing_.load(std::memory_order_relaxed); }
  // Times 1 launch in |n| (COMMLENS_KERNEL_SAMPLE); the others are left untimed on purpose
  // (not counted as untimed). 1, every launch, unless set.
  void SetSample(uint32_t n) { sample_ = n > 0 ? n : 1; }

  // Whether the launch is being captured into a CUDA graph, as far as the caller knows
  // (NCCL says so of the launch's group): when it is known, Begin makes no driver call
  // to ask, one of the three a timed launch would otherwise cost its thread.
  enum class Capture : uint8_t { kUnknown, kNo, kYes };
  // Hot path, on the launching thread: just before NCCL launches on |stream|. Returns the
  // slot, or kNone when this launch is not timed.
  uint32_t Begin(uint64_t stream, Capture capture = Capture::kUnknown);
  // Just after the launch: |api_id| names it (its KernelLaunch ApiRecord).
  void End(uint32_t slot, uint64_t api_id);

  // The flusher: a LaunchTiming record per completed launch, and a LaunchTimer record
  // when the counters or the state changed (always the first time).
  void Collect(int64_t now_ns, native_format::RecordWriter* out);
  // The session's end: collects until no launch is in flight or |wait_ns| has passed.
  void Finish(int64_t now_ns, native_format::RecordWriter* out, int64_t wait_ns);

  // A quarter of the slots or more in use: the flusher collects before its next file
  // write (a launch-dense job would otherwise run out of slots within a second).
  bool Crowded() const;

  uint64_t timed() const { return timed_; }
  // What timing cost the launching threads so far (this file): the host time of Begin's
  // and End's CUDA calls, summed over the launches timed (the flusher's, as timed()).
  uint64_t host_ns() const { return host_ns_; }
  uint64_t host_launches() const { return timed_; }
  uint64_t untimed() const { return skipped_.load(std::memory_order_relaxed) + failed_.load(std::memory_order_relaxed); }
  // The flusher, after a Collect: CUDA refused every launch tried so far (kGiveUpAfter of
  // them, none timed). The timer turns itself off (kFailed, why) and says so once.
  bool GaveUp(std::string* why);
  static constexpr uint64_t kGiveUpAfter = 16;

 private:
  enum SlotState : uint8_t { kFree, kBegun, kEnded };
  struct Slot {
    std::atomic<uint8_t> state{kFree};
    GpuEvents::Handle context = 0, start = 0, end = 0;
    uint64_t stream = 0;
    uint64_t api_id = 0;
    uint32_t file = 0;  // file_ when it began: a launch of an earlier file is not written in this one
    int64_t host_ns = 0;  // host time of Begin's CUDA calls, then End's too
  };
  // A context's anchor: a stream of the timer's own and two events, so that the tighter
  // of two tries (the shorter host window around its completion) is kept.
  struct Anchor {
    GpuEvents::Handle context = 0, stream = 0, event[2] = {0, 0};
  };
  static constexpr int kAnchorTries = 3;
  static constexpr int64_t kTightAnchorNs = 4'000;  // good enough: no more tries

  void Release(uint32_t slot);
  // A CUDA call refused the slot's events (its context gone?): made again at its next use.
  void Forget(Slot& s);
  enum class Anchored { kYes, kSlow, kError };
  void Skipped() { skipped_.fetch_add(1, std::memory_order_relaxed); }  // not to be timed
  void Failed() { failed_.fetch_add(1, std::memory_order_relaxed); }    // a CUDA call refused
  GpuEvents::Handle ContextOf(uint64_t stream);
  bool Ready(Slot& s, GpuEvents::Handle context);
  Anchor* AnchorFor(GpuEvents::Handle context);
  void Destroy(const Anchor& a);
  void PlaceContext(GpuEvents::Handle context, std::span<const std::pair<GpuEvents::Handle, uint32_t>> done,
                    native_format::RecordWriter* out);
  void ReportState(int64_t now_ns, native_format::RecordWriter* out);
  // Records |a|'s events until one is seen within kTightAnchorNs (at most kAnchorTries):
  // the tightest one's event, host time (the window's middle) and half window (measured on
  // the monotonic clock: a step of the wall clock cannot shrink it); kSlow if none was
  // seen within kAnchorWaitNs, kError if CUDA refused the anchor.
  Anchored Place(Anchor& a, GpuEvents::Handle* event, int64_t* host, int64_t* half_window);
  size_t InFlight() const;

  GpuEvents* events_;
  std::atomic<bool> timing_{false};
  uint32_t sample_ = 1;
  std::atomic<uint32_t> file_{0};  // counts Starts
  std::atomic<uint64_t> launches_{0};  // for the sampling
  native_format::LaunchTimerState state_ = native_format::LaunchTimerState::kOff;
  std::string why_;
  bool loaded_ = false;

  std::unique_ptr<Slot[]> slots_;
  mutable std::mutex mu_;                                        // guards the two below
  std::vector<uint32_t> free_;                                   // slots not in use
  std::vector<std::pair<uint64_t, GpuEvents::Handle>> streams_;  // stream -> its context, recent first
  std::vector<Anchor> anchors_;                                  // the flusher's, one per context
  std::atomic<uint64_t> skipped_{0}, failed_{0};
  uint64_t timed_ = 0;                                           // the flusher's
  uint64_t host_ns_ = 0;                                         // the flusher's: the timed launches' host_ns
  bool news_ = true;                                             // a LaunchTimer record is due
  uint64_t reported_timed_ = 0, reported_untimed_ = 0;
};

}  // namespace commlens::recorder::launch_timer
