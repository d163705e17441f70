#include "recorder/launch_timer/launch_timer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <span>
#include <thread>

namespace commlens::recorder::launch_timer {

namespace nf = native_format;

namespace {

int64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
int64_t RealtimeNs() { return ClockNs(CLOCK_REALTIME); }
int64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

// Handles 0, 1 and 2 are CUDA's default streams (legacy, per-thread): each names the
// calling thread's current context, so their context is not cached.
constexpr uint64_t kDefaultStreams = 2;

constexpr size_t kCachedStreams = 16;

}  // namespace

LaunchTimer::LaunchTimer(GpuEvents* events) : events_(events), slots_(new Slot[kSlots]) {
  free_.reserve(kSlots);
  for (uint32_t i = kSlots; i > 0; --i) free_.push_back(i - 1);
}

LaunchTimer::~LaunchTimer() = default;

bool LaunchTimer::Start(std::string* why) {
  timing_ = false;
  if (!loaded_) {
    std::string reason;
    loaded_ = events_ != nullptr && events_->Load(&reason);
    if (!loaded_) why_ = events_ ? reason : "no CUDA driver calls";
  }
  state_ = loaded_ ? nf::LaunchTimerState::kTiming : nf::LaunchTimerState::kFailed;
  if (!loaded_) *why = why_;
  timed_ = host_ns_ = reported_timed_ = reported_untimed_ = 0;
  skipped_ = 0;
  failed_ = 0;
  news_ = true;
  file_.fetch_add(1, std::memory_order_relaxed);
  timing_ = loaded_;
  return loaded_;
}

void LaunchTimer::Off() {
  timing_ = false;
  state_ = nf::LaunchTimerState::kOff;
  news_ = true;
}

void LaunchTimer::Forget(Slot& s) {
  events_->DestroyEvent(s.start);
  events_->DestroyEvent(s.end);
  s.start = s.end = 0;
  s.context = 0;
}

void LaunchTimer::Release(uint32_t slot) {
  slots_[slot].state.store(kFree, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(slot);
}

bool LaunchTimer::Crowded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kSlots - free_.size() >= kSlots / 4;
}

GpuEvents::Handle LaunchTimer::ContextOf(uint64_t stream) {
  if (stream <= kDefaultStreams) return events_->StreamContext(stream);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [s, context] : streams_)
      if (s == stream) return context;
  }
  const GpuEvents::Handle context = events_->StreamContext(stream);
  if (context == 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (streams_.size() >= kCachedStreams) streams_.pop_back();
  streams_.insert(streams_.begin(), {stream, context});
  return context;
}

// The slot's events belong to |context| (made there the first time, or again when the
// slot last served another context).
bool LaunchTimer::Ready(Slot& s, GpuEvents::Handle context) {
  if (s.context == context && s.start != 0 && s.end != 0) return true;
  Forget(s);
  s.start = events_->NewEvent(context);
  s.end = events_->NewEvent(context);
  s.context = context;
  return s.start != 0 && s.end != 0;
}

uint32_t LaunchTimer::Begin(uint64_t stream, Capture capture) {
  if (!timing()) return kNone;
  if (sample_ > 1 && launches_.fetch_add(1, std::memory_order_relaxed) % sample_ != 0) return kNone;
  // The launching thread's time from here to the start event's record (a driver query or
  // two, the first use's event creation, the record) is what timing costs it, with End's.
  const int64_t t0 = MonotonicNs();
  if (capture == Capture::kYes || (capture == Capture::kUnknown && events_->Capturing(stream))) {
    Skipped();
    return kNone;
  }
  const GpuEvents::Handle context = ContextOf(stream);
  if (context == 0) {
    Failed();
    return kNone;
  }
  uint32_t slot = kNone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    }
  }
  if (slot == kNone) {
    Skipped();
    return kNone;
  }
  Slot& s = slots_[slot];
  if (!Ready(s, context) || !events_->Record(s.start, stream)) {
    // A stream gone and its handle reused in another context, or the context gone: the
    // stream asked again, and the slot's events made again, next time.
    Forget(s);
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::erase_if(streams_, [&](const auto& e) { return e.first == stream; });
    }
    Release(slot);
    Failed();
    return kNone;
  }
  s.stream = stream;
  s.file = file_.load(std::memory_order_relaxed);
  s.host_ns = MonotonicNs() - t0;
  s.state.store(kBegun, std::memory_order_relaxed);
  return slot;
}

void LaunchTimer::End(uint32_t slot, uint64_t api_id) {
  if (slot >= kSlots) return;
  Slot& s = slots_[slot];
  if (s.state.load(std::memory_order_relaxed) != kBegun) return;
  const int64_t t0 = MonotonicNs();
  const bool recorded = events_->Record(s.end, s.stream);
  s.host_ns += MonotonicNs() - t0;
  if (!recorded) {
    Forget(s);
    Release(slot);
    Failed();
    return;
  }
  s.api_id = api_id;
  s.state.store(kEnded, std::memory_order_release);  // the flusher's from here
}

LaunchTimer::Anchor* LaunchTimer::AnchorFor(GpuEvents::Handle context) {
  for (Anchor& a : anchors_)
    if (a.context == context) return &a;
  Anchor a;
  a.context = context;
  a.stream = events_->NewStream(context);
  a.event[0] = events_->NewEvent(context);
  a.event[1] = events_->NewEvent(context);
  if (a.stream == 0 || a.event[0] == 0 || a.event[1] == 0) {
    Destroy(a);
    return nullptr;
  }
  anchors_.push_back(a);
  return &anchors_.back();
}

void LaunchTimer::Destroy(const Anchor& a) {
  events_->DestroyEvent(a.event[0]);
  events_->DestroyEvent(a.event[1]);
  events_->DestroyStream(a.stream);
}

LaunchTimer::Anchored LaunchTimer::Place(Anchor& a, GpuEvents::Handle* event, int64_t* host, int64_t* half_window) {
  int best = -1;
  int64_t best_width = 0, best_t0 = 0;
  for (int k = 0, slot = 0; k < kAnchorTries; ++k) {
    const int64_t t0 = RealtimeNs(), m0 = MonotonicNs();
    if (!events_->Record(a.event[slot], a.stream)) return Anchored::kError;
    GpuEvents::Done q;
    int64_t m1 = m0;
    while ((q = events_->Query(a.event[slot])) == GpuEvents::Done::kNotYet && (m1 = MonotonicNs()) - m0 <= kAnchorWaitNs) {
    }
    if (q == GpuEvents::Done::kError) return Anchored::kError;
    if (q != GpuEvents::Done::kYes) break;
    m1 = MonotonicNs();
    if (best < 0 || m1 - m0 < best_width) {
      best = slot;
      best_width = m1 - m0;
      best_t0 = t0;
      slot = 1 - slot;  // keep the best one's event as it is
    }
    if (best_width <= kTightAnchorNs) break;
  }
  if (best < 0) return Anchored::kSlow;
  *event = a.event[best];
  *host = best_t0 + best_width / 2;
  *half_window = best_width / 2;
  return Anchored::kYes;
}

void LaunchTimer::Collect(int64_t now_ns, nf::RecordWriter* out) {
  const int capture_mode = loaded_ ? events_->RelaxCapture() : -1;  // no driver: no CUDA call below
  // The launches whose kernels have finished, by context; each context's anchor is recorded
  // after them, so that every one of them lies before it on the GPU.
  std::vector<std::pair<GpuEvents::Handle, uint32_t>> done;
  const uint32_t file = file_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < kSlots; ++i) {
    Slot& s = slots_[i];
    if (s.state.load(std::memory_order_acquire) != kEnded) continue;
    if (s.file != file) {  // an earlier file's launch: its id means nothing in this one
      Release(i);
      continue;
    }
    switch (events_->Query(s.end)) {
      case GpuEvents::Done::kYes: done.emplace_back(s.context, i); break;
      case GpuEvents::Done::kNotYet: break;
      case GpuEvents::Done::kError:
        Release(i);
        Failed();
        break;
    }
  }
  std::sort(done.begin(), done.end());
  for (size_t first = 0, last = 0; first < done.size(); first = last) {
    while (last < done.size() && done[last].first == done[first].first) ++last;
    PlaceContext(done[first].first, std::span(done).subspan(first, last - first), out);
  }
  ReportState(now_ns, out);
  if (loaded_) events_->RestoreCapture(capture_mode);
}

// One context's finished launches, put on the host clock through its anchor and written.
void LaunchTimer::PlaceContext(GpuEvents::Handle context, std::span<const std::pair<GpuEvents::Handle, uint32_t>> done,
                               nf::RecordWriter* out) {
  Anchor* anchor = AnchorFor(context);
  GpuEvents::Handle anchor_event = 0;
  int64_t host = 0, half_window = 0;
  const Anchored placed = anchor != nullptr ? Place(*anchor, &anchor_event, &host, &half_window) : Anchored::kError;
  if (placed == Anchored::kSlow) return;  // the GPU busy in another way: tried again next time
  for (const auto& [ctx, slot] : done) {
    Slot& s = slots_[slot];
    int64_t to_start = 0, to_end = 0;
    if (placed == Anchored::kYes && events_->ElapsedNs(s.start, anchor_event, &to_start) &&
        events_->ElapsedNs(s.end, anchor_event, &to_end) && to_start >= to_end) {
      nf::LaunchTimingRecord r{};
      r.api_id = s.api_id;
      r.gpu_start_ns = host - to_start;
      r.gpu_end_ns = host - to_end;
      r.anchor_error_ns = static_cast<uint32_t>(std::min<int64_t>(half_window, UINT32_MAX));
      out->Append(nf::RecordType::kLaunchTiming, r);
      ++timed_;
      host_ns_ += static_cast<uint64_t>(s.host_ns);
    } else {
      Failed();  // no anchor in this context (CUDA refused it: the context gone?), or no elapsed time
    }
    Release(slot);
  }
  if (placed == Anchored::kError && anchor != nullptr) {  // made again next time
    Destroy(*anchor);
    anchors_.erase(anchors_.begin() + (anchor - anchors_.data()));
  }
}

// A LaunchTimer record when the counters or the state changed (always the first time).
void LaunchTimer::ReportState(int64_t now_ns, nf::RecordWriter* out) {
  const uint64_t not_timed = untimed();
  if (!news_ && timed_ == reported_timed_ && not_timed == reported_untimed_) return;
  nf::LaunchTimerRecord r{};
  r.time_ns = now_ns;
  r.state = static_cast<uint32_t>(state_);
  if (state_ == nf::LaunchTimerState::kFailed && !why_.empty()) {
    out->AppendString(kStringId, why_);
    r.reason = kStringId;
  }
  r.timed = timed_;
  r.untimed = not_timed;
  r.host_ns = host_ns_;
  r.host_launches = timed_;
  out->Append(nf::RecordType::kLaunchTimer, r);
  news_ = false;
  reported_timed_ = timed_;
  reported_untimed_ = not_timed;
}

bool LaunchTimer::GaveUp(std::string* why) {
  if (!timing() || timed_ > 0 || failed_.load(std::memory_order_relaxed) < kGiveUpAfter) return false;
  timing_ = false;
  state_ = nf::LaunchTimerState::kFailed;
  why_ = "CUDA refused the events on NCCL's launch streams " + std::to_string(kGiveUpAfter) + " times";
  news_ = true;
  *why = why_;
  return true;
}

size_t LaunchTimer::InFlight() const {
  size_t n = 0;
  const uint32_t file = file_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < kSlots; ++i)
    n += slots_[i].state.load(std::memory_order_acquire) == kEnded && slots_[i].file == file;
  return n;
}

void LaunchTimer::Finish(int64_t now_ns, nf::RecordWriter* out, int64_t wait_ns) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(wait_ns);
  Collect(now_ns, out);
  while (InFlight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Collect(now_ns, out);
  }
  timing_ = false;
}

}  // namespace commlens::recorder::launch_timer
