#include "recorder/cupti_tracer/tracer.h"

#include <algorithm>

namespace commlens::recorder::cupti {

namespace nf = native_format;

bool Tracer::Start() {
  std::string why;
  const StartResult r = backend_ ? backend_->Start(this, &why) : StartResult::kFailed;
  std::lock_guard<std::mutex> lock(mu_);
  // A new session writes a new file: its strings are named again, and what an earlier
  // file did not get is not carried into this one.
  ids_.clear();
  pending_.Clear();
  records_ = dropped_ = reported_ = 0;
  records_at_drain_ = kernels_at_drain_ = 0;
  stalled_drains_ = 0;
  streams_.clear();
  stopped_ = false;
  paused_ = false;
  state_ = r == StartResult::kTracing        ? nf::TracerState::kTracing
           : r == StartResult::kSteppedAside ? nf::TracerState::kSteppedAside
                                             : nf::TracerState::kFailed;
  why_ = r == StartResult::kTracing ? "" : why.empty() ? "no activity backend" : why;
  news_ = true;
  return r == StartResult::kTracing;
}

void Tracer::Stop() {
  if (backend_ && tracing() && !stopped_.exchange(true)) backend_->Stop();
}

void Tracer::SetPaused(bool paused) {
  if (!backend_ || !tracing() || stopped_.load() || paused == paused_) return;
  paused_ = paused;
  backend_->SetPaused(paused);
}

void Tracer::NoteLaunchStream(uint64_t stream) {
  if (!backend_ || !tracing() || stopped_.load()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::find(streams_.begin(), streams_.end(), stream) != streams_.end()) return;
    streams_.push_back(stream);  // asked once, told or not
  }
  // The backend is asked without |mu_|: CUPTI may hold its own lock while its thread
  // waits for |mu_| to hand over a buffer.
  uint32_t id = 0;
  if (!backend_->StreamId(stream, &id)) return;
  std::lock_guard<std::mutex> lock(mu_);
  nf::StreamIdRecord r{};
  r.stream = stream;
  r.cupti_stream = id;
  pending_.Append(nf::RecordType::kStreamId, r);
}

uint64_t Tracer::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

uint64_t Tracer::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

uint32_t Tracer::StringIdLocked(std::string_view text) {
  if (text.empty()) return 0;
  if (text.size() > kMaxName) text = text.substr(0, kMaxName);
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  // Unique NVTX messages would grow the table without end: past kMaxStrings, names are
  // written again under new ids (the file stays right; it only grows).
  if (ids_.size() >= kMaxStrings) ids_.clear();
  const uint32_t id = next_id_++;
  pending_.AppendString(id, text);
  ids_.emplace(std::string(text), id);
  return id;
}

void Tracer::OnGpuActivity(const nf::GpuActivityRecord& record, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  nf::GpuActivityRecord r = record;
  r.name = StringIdLocked(name);
  pending_.Append(nf::RecordType::kGpuActivity, r);
  ++records_;
}

void Tracer::OnCudaApi(const nf::CudaApiRecord& record, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  nf::CudaApiRecord r = record;
  r.name = StringIdLocked(name);
  pending_.Append(nf::RecordType::kCudaApi, r);
  ++records_;
}

void Tracer::OnRange(const nf::RangeRecord& record, std::string_view name, std::string_view domain) {
  std::lock_guard<std::mutex> lock(mu_);
  nf::RangeRecord r = record;
  r.name = StringIdLocked(name);
  r.domain = StringIdLocked(domain);
  pending_.Append(nf::RecordType::kRange, r);
  ++records_;
}

void Tracer::OnDropped(uint64_t records) {
  if (records == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  dropped_ += records;
  news_ = true;
}

void Tracer::LoseLocked(int64_t now_ns, std::string why) {
  backend_->LetGo();
  stopped_ = true;
  state_ = nf::TracerState::kSteppedAside;
  why_ = std::move(why) + ", at " + std::to_string(now_ns) + " ns";
  news_ = true;
}

// Records stopped coming while NCCL's kernels went on running: another client registered
// its own buffer callbacks (it need not subscribe), or disabled the kinds when it stopped.
// Suspected after kStalledDrains such drains; Drain then forces CUPTI's partly filled
// buffers out before it concludes.
bool Tracer::StallSuspectedLocked(uint64_t nccl_kernels_done) {
  if (records_ != records_at_drain_ || paused_) {
    stalled_drains_ = 0;
    kernels_at_drain_ = nccl_kernels_done;
  } else if (nccl_kernels_done > kernels_at_drain_) {
    ++stalled_drains_;  // NCCL's kernels ran, and no record came of them
  }
  records_at_drain_ = records_;
  return stalled_drains_ >= kStalledDrains && nccl_kernels_done >= kernels_at_drain_ + kStallKernels;
}

void Tracer::Drain(int64_t now_ns, nf::RecordWriter* into, uint64_t nccl_kernels_done) {
  std::string lost;
  const bool live = backend_ && tracing() && !stopped_.load();
  if (live && !paused_ && !backend_->Held(&lost)) {
    std::lock_guard<std::mutex> lock(mu_);
    LoseLocked(now_ns, std::move(lost));
  } else if (live) {
    backend_->Flush();
    bool suspected = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      suspected = nccl_kernels_done > 0 && StallSuspectedLocked(nccl_kernels_done);
    }
    if (suspected) backend_->FlushAll();  // its callbacks take mu_: not held here
    std::lock_guard<std::mutex> lock(mu_);
    if (suspected && records_ == records_at_drain_) {
      LoseLocked(now_ns, "CUPTI delivered nothing for " + std::to_string(stalled_drains_) +
                             " flushes, a forced one too, while " + std::to_string(nccl_kernels_done - kernels_at_drain_) +
                             " NCCL kernels ran: another CUPTI client took its activity buffers");
    } else if (suspected) {
      stalled_drains_ = 0;  // the records were in a buffer still being filled
      kernels_at_drain_ = nccl_kernels_done;
      records_at_drain_ = records_;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (news_ || records_ != reported_) {
    nf::TracerRecord t{};
    t.time_ns = now_ns;
    t.state = static_cast<uint32_t>(state_.load());
    t.reason = StringIdLocked(why_);
    t.records = records_;
    t.dropped = dropped_;
    pending_.Append(nf::RecordType::kTracer, t);
    news_ = false;
    reported_ = records_;
  }
  into->AppendRecords(pending_);
  pending_.Clear();
}

}  // namespace commlens::recorder::cupti
