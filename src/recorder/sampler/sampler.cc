#include "recorder/sampler/sampler.h"

#include <cstdio>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "recorder/nccl_profiler/clock.h"
#include "recorder/sampler/nic_source.h"
#include "recorder/sampler/nvml_source.h"

#ifndef COMMLENS_VERSION
#define COMMLENS_VERSION "0"
#endif

namespace commlens::recorder::sampler {

namespace nf = native_format;

namespace {

std::string EnvOr(std::initializer_list<const char*> names, const char* fallback) {
  for (const char* n : names)
    if (const char* v = std::getenv(n); v && *v) return v;
  return fallback;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

uint64_t ThreadCpuNs() { return static_cast<uint64_t>(ReadClockNs(CLOCK_THREAD_CPUTIME_ID)); }

Status Check(const SamplerOptions& o) {
  if (!(o.hz > 0 && o.hz <= kMaxSampleHz))
    return Error("sample rate " + std::to_string(o.hz) + " Hz is out of range (above 0, at most 1000)");
  if (!(o.events_hz > 0)) return Error("the events rate must be above 0 Hz");
  if (!(o.gpu_hz > 0)) return Error("the GPU metrics rate must be above 0 Hz");
  if (o.flush_interval_ms <= 0) return Error("the flush interval must be above 0 ms");
  if (o.buffer_bytes < (size_t{64} << 10)) return Error("the sample buffer must hold at least 64 KiB");
  return OkStatus();
}

}  // namespace

double SamplerReport::CpuNsPerTick() const {
  return ticks == 0 ? 0.0 : static_cast<double>(sampler_cpu_ns + writer_cpu_ns) / static_cast<double>(ticks);
}

double SamplerReport::CpuShare() const {
  return wall_ns <= 0 ? 0.0 : static_cast<double>(sampler_cpu_ns + writer_cpu_ns) / static_cast<double>(wall_ns);
}

std::string SamplesFileName(const std::string& job_id, const std::string& hostname) {
  auto clean = [](std::string s) {
    for (char& c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    return s.empty() ? std::string("_") : s;
  };
  return clean(job_id) + "." + clean(hostname) + ".samples.cltrace";
}

Sampler::Sampler(SamplerOptions options)
    : options_(std::move(options)), buffer_(options_.hostname, options_.buffer_bytes) {}

Result<std::unique_ptr<Sampler>> Sampler::Create(SamplerOptions options) {
  COMMLENS_RETURN_IF_ERROR(Check(options));
  if (options.hostname.empty()) options.hostname = Hostname();
  if (options.job_id.empty()) options.job_id = EnvOr({"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}, "job");
  std::unique_ptr<Sampler> s(new Sampler(std::move(options)));
  const SamplerOptions& o = s->options_;
  s->path_ = o.output_path;
  if (s->path_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    if (ec) return Error(o.output_dir + ": cannot create the output folder: " + ec.message());
    s->path_ = (std::filesystem::path(o.output_dir) / SamplesFileName(o.job_id, o.hostname)).string();
  }
  COMMLENS_ASSIGN_OR_RETURN(s->file_, SampleFile::Open(s->path_));
  s->period_ns_ = static_cast<int64_t>(std::llround(1e9 / o.hz));
  s->events_every_ = std::max<int64_t>(1, std::llround(o.hz / o.events_hz));
  s->gpu_every_ = std::max<int64_t>(1, std::llround(o.hz / o.gpu_hz));
  s->flush_ns_ = int64_t{o.flush_interval_ms} * 1'000'000;

  SampleBuffer& b = s->buffer_;
  b.records().AppendFileHeader();
  nf::ProcessRecord p{};
  p.start_realtime_ns = RealtimeNs();
  p.start_monotonic_ns = MonotonicNs();
  p.pid = static_cast<int32_t>(getpid());
  p.global_rank = -1;
  p.local_rank = -1;
  p.hostname = b.Intern(o.hostname);
  p.job_id = b.Intern(o.job_id);
  p.plugin_version = b.Intern("commlens " COMMLENS_VERSION " sampler");
  p.flush_interval_ms = static_cast<uint32_t>(o.flush_interval_ms);
  p.writer = static_cast<uint32_t>(nf::Writer::kSampler);
  b.records().Append(nf::RecordType::kProcess, p);

  if (o.nics)
    for (NicSpec& nic : DiscoverNics(o.nic, &s->notes_)) s->sources_.push_back(std::make_unique<NicSource>(std::move(nic)));
  if (o.gpus)
    for (auto& gpu : OpenGpuSources(o.nvml_library, &s->notes_)) s->sources_.push_back(std::move(gpu));
  for (const std::string& note : s->notes_) b.Event(p.start_realtime_ns, nf::SamplerEventKind::kNote, 0, 0, note);
  for (auto& source : s->sources_) {
    source->Define(&b);
    s->source_costs_.push_back({source->name(), 0, 0, 0});
  }
  s->Flush();
  return s;
}

Sampler::~Sampler() {
  if (!stopped_ && file_) Stop();  // no file: Create failed, nothing was started
}

void Sampler::Start() {
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Loop(); });
}

// |all|: every group is due (the first and last tick, TickNow's default).
void Sampler::RunTick(int64_t index, bool all) {
  Tick tick{index, MonotonicNs(), all || index % events_every_ == 0, all || index % gpu_every_ == 0};
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (!sources_[i]->Due(tick)) continue;
    const int64_t t0 = MonotonicNs();
    sources_[i]->Sample(tick, &buffer_);
    const uint64_t took = static_cast<uint64_t>(MonotonicNs() - t0);
    SamplerReport::SourceCost& c = source_costs_[i];
    ++c.readings;
    c.total_ns += took;
    c.max_ns = std::max(c.max_ns, took);
  }
  ++ticks_;
  next_index_ = index + 1;
}

void Sampler::TickNow(bool all) {
  if (thread_.joinable() || stopped_) return;
  const uint64_t cpu0 = ThreadCpuNs();
  const int64_t began = MonotonicNs();
  if (start_monotonic_ns_ == 0) {
    start_monotonic_ns_ = began;
    start_realtime_ns_ = RealtimeNs();
  }
  RunTick(next_index_, all);
  const int64_t ended = MonotonicNs();
  const uint64_t took = static_cast<uint64_t>(ended - began);
  busy_ns_ += took;
  max_tick_ns_ = std::max(max_tick_ns_, took);
  if (next_flush_ns_ == 0) next_flush_ns_ = began + flush_ns_;
  if (ended >= next_flush_ns_) {
    Flush();
    next_flush_ns_ = ended + flush_ns_;
  }
  cpu_ns_ += ThreadCpuNs() - cpu0;
}

void Sampler::Loop() {
  const uint64_t cpu0 = ThreadCpuNs();
  start_monotonic_ns_ = MonotonicNs();
  start_realtime_ns_ = RealtimeNs();
  next_flush_ns_ = start_monotonic_ns_ + flush_ns_;
  int64_t k = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const int64_t deadline = start_monotonic_ns_ + k * period_ns_;
    // steady_clock is CLOCK_MONOTONIC: an absolute deadline, so no drift accumulates.
    const std::chrono::steady_clock::time_point at{std::chrono::nanoseconds(deadline)};
    if (cv_.wait_until(lock, at, [this] { return stop_; })) {
      // Deadlines that came before the stop was asked but found the loop not yet awake (a
      // starved thread) were neither taken nor counted: they are missed.
      if (stop_requested_ns_ >= deadline)
        missed_ += static_cast<uint64_t>((stop_requested_ns_ - start_monotonic_ns_) / period_ns_ - k + 1);
      break;
    }
    lock.unlock();
    const int64_t began = MonotonicNs();
    max_late_ns_ = std::max<uint64_t>(max_late_ns_, static_cast<uint64_t>(std::max<int64_t>(0, began - deadline)));
    RunTick(k, k == 0);
    const int64_t ended = MonotonicNs();
    busy_ns_ += static_cast<uint64_t>(ended - began);
    max_tick_ns_ = std::max<uint64_t>(max_tick_ns_, static_cast<uint64_t>(ended - began));
    if (ended >= next_flush_ns_) {
      cpu_ns_ = ThreadCpuNs() - cpu0;
      Flush();
      next_flush_ns_ = ended + flush_ns_;
    }
    lock.lock();
    // Ran past the next deadline: those it passed are missed, up to the stop if one was
    // asked meanwhile (the run ends there).
    int64_t next = k + 1;
    const int64_t until = stop_ ? std::min(ended, stop_requested_ns_) : ended;
    if (start_monotonic_ns_ + next * period_ns_ <= until) {
      const int64_t first_future = (until - start_monotonic_ns_) / period_ns_ + 1;
      missed_ += static_cast<uint64_t>(first_future - next);
      next = first_future;
    }
    k = next;
  }
  cpu_ns_ = ThreadCpuNs() - cpu0;
}

void Sampler::AppendStats(int64_t now_ns) {
  nf::SamplerStatsRecord r{};
  r.time_ns = now_ns;
  r.start_ns = start_realtime_ns_;
  r.period_ns = static_cast<uint64_t>(period_ns_);
  r.ticks = ticks_;
  r.missed_ticks = missed_;
  r.values = buffer_.values();
  r.dropped_values = buffer_.dropped_values();
  r.read_errors = buffer_.read_errors();
  r.sampler_cpu_ns = cpu_ns_;
  r.writer_cpu_ns = file_->cpu_ns();
  r.busy_ns = busy_ns_;
  r.max_tick_ns = max_tick_ns_;
  r.max_late_ns = max_late_ns_;
  r.series = buffer_.series_count();
  buffer_.records().Append(nf::RecordType::kSamplerStats, r);
}

void Sampler::Flush() {
  // The writer still at the last flush: keep the bytes (the buffer is bounded) and try
  // again at the next one.
  if (!file_->idle()) return;
  AppendStats(RealtimeNs());  // so a killed sampler's file still says what it cost
  buffer_.SwapBytes(&handoff_);
  file_->TryHandOver(&handoff_);
}

std::string FormatCostNs(uint64_t ns) {
  char buf[32];
  if (ns < 10'000) std::snprintf(buf, sizeof(buf), "%.2f us", static_cast<double>(ns) / 1e3);
  else if (ns < 10'000'000) std::snprintf(buf, sizeof(buf), "%.0f us", static_cast<double>(ns) / 1e3);
  else std::snprintf(buf, sizeof(buf), "%.1f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

SamplerReport Sampler::Stop() {
  if (stopped_) return Report();
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      stop_requested_ns_ = MonotonicNs();
    }
    cv_.notify_all();
    thread_.join();
  }
  // A last reading of everything, the slow group included, so totals cover the run.
  const uint64_t cpu0 = ThreadCpuNs();
  if (start_monotonic_ns_ == 0) {
    start_monotonic_ns_ = MonotonicNs();
    start_realtime_ns_ = RealtimeNs();
  }
  RunTick(next_index_, true);
  cpu_ns_ += ThreadCpuNs() - cpu0;
  stop_monotonic_ns_ = MonotonicNs();
  const int64_t now = RealtimeNs();
  // Where the time went, in the file for whoever reads it later.
  for (size_t i = 0; i < source_costs_.size(); ++i) {
    const SamplerReport::SourceCost& c = source_costs_[i];
    if (c.readings == 0) continue;
    const std::string detail = sources_[i]->CostDetail();
    buffer_.Event(now, nf::SamplerEventKind::kNote, 0, 0,
                  "reading " + c.name + " took " + FormatCostNs(c.total_ns / c.readings) + " on average over " +
                      std::to_string(c.readings) + " readings (longest " + FormatCostNs(c.max_ns) + ")" +
                      (detail.empty() ? "" : ": " + detail));
  }
  AppendStats(now);
  nf::EndRecord end{now, static_cast<uint32_t>(nf::EndReason::kFinalize), 0};
  buffer_.records().Append(nf::RecordType::kEnd, end);
  buffer_.SwapBytes(&handoff_);
  file_->Finish(&handoff_);
  stopped_ = true;
  return Report();
}

SamplerReport Sampler::Report() const {
  SamplerReport r;
  r.path = path_;
  r.hz = options_.hz;
  r.devices = static_cast<uint32_t>(sources_.size());
  r.series = buffer_.series_count();
  r.ticks = ticks_;
  r.missed_ticks = missed_;
  r.values = buffer_.values();
  r.dropped_values = buffer_.dropped_values();
  r.read_errors = buffer_.read_errors();
  // The run the deadlines covered: until the stop was asked (the last reading after it is
  // Stop's own); without a loop thread, until the last reading.
  const int64_t end = stop_requested_ns_ >= start_monotonic_ns_ && stop_requested_ns_ != 0 ? stop_requested_ns_
                      : stop_monotonic_ns_ != 0                                       ? stop_monotonic_ns_
                                                                                      : MonotonicNs();
  r.wall_ns = end - start_monotonic_ns_;
  r.sampler_cpu_ns = cpu_ns_;
  r.writer_cpu_ns = file_->cpu_ns();
  r.busy_ns = busy_ns_;
  r.max_tick_ns = max_tick_ns_;
  r.max_late_ns = max_late_ns_;
  r.bytes_written = file_->bytes_written();
  r.write_error = file_->error();
  r.notes = notes_;
  r.sources = source_costs_;
  return r;
}

}  // namespace commlens::recorder::sampler
