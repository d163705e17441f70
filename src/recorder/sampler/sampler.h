// The sampler of `commlens record`: NIC counters (sysfs) and GPU metrics (NVML) of one
// host, read at a fixed rate on a thread of its own and written as one native-format
// file per host, `<job>.<host>.samples.cltrace` (docs/formats.md, "Sampler records";
// docs/recorder.md, "Samplers").
//
// Timing. Timestamps are CLOCK_REALTIME ns, the clock of the NCCL profiler plugin's host
// times (nccl_profiler/clock.h), so every sample lines up with every collective. Ticks
// are scheduled on CLOCK_MONOTONIC at absolute deadlines start + k * period, so there is
// no drift; a tick that runs past the next deadline skips the deadlines it missed
// (counted) rather than bursting to catch up.
//
// Cost. The sampling thread measures its own CPU time (CLOCK_THREAD_CPUTIME_ID, which
// includes waking and sleeping), the writer thread its own; both are in the file's
// SamplerStats record and in the report Stop returns.
//
// Bounds. Samples wait in a buffer of at most SamplerOptions::buffer_bytes, handed to
// the writer thread every flush interval; when the disk falls that far behind, samples
// are dropped and counted, and the sampler never blocks on the disk.
//
// Threading: Create, Start, TickNow and Stop are called from one thread (the owner).
// TickNow is for a sampler that was not started (tests, callers with their own clock).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "recorder/sampler/nic_counter_files.h"
#include "recorder/sampler/sample_buffer.h"
#include "recorder/sampler/sample_file.h"
#include "recorder/sampler/sample_source.h"

namespace commlens::recorder::sampler {

inline constexpr double kMaxSampleHz = 1000.0;

struct SamplerOptions {
  std::string output_dir = ".";  // created if missing; the file is <job>.<host>.samples.cltrace
  std::string output_path;       // the file itself, when set (output_dir is then unused)
  std::string job_id;            // empty: SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, else "job"
  std::string hostname;          // empty: gethostname()
  double hz = 10.0;              // ticks per second, above 0 and at most kMaxSampleHz
  double events_hz = 1.0;        // the slow group (errors, link rates), at most |hz|
  double gpu_hz = 10.0;          // GPU metrics (NVML), at most |hz|
  int flush_interval_ms = 1000;
  size_t buffer_bytes = size_t{16} << 20;
  bool nics = true;
  NicDiscoveryOptions nic;       // sysfs root, lo, filters
  bool gpus = true;
  std::string nvml_library;      // empty: NVML's own name (topo/nvml_api.h); tests name a missing one
};

// The sampler's account of itself, also written to the file (SamplerStatsRecord).
struct SamplerReport {
  std::string path;
  double hz = 0;
  uint32_t devices = 0;
  uint32_t series = 0;
  uint64_t ticks = 0;
  uint64_t missed_ticks = 0;
  uint64_t values = 0;
  uint64_t dropped_values = 0;
  uint64_t read_errors = 0;
  int64_t wall_ns = 0;          // from the first deadline to the stop
  uint64_t sampler_cpu_ns = 0;  // sampling thread (or, without one, the ticks taken by TickNow)
  uint64_t writer_cpu_ns = 0;
  uint64_t busy_ns = 0;         // wall time inside ticks
  uint64_t max_tick_ns = 0;
  uint64_t max_late_ns = 0;
  uint64_t bytes_written = 0;
  int write_error = 0;          // errno of a failed write; the file stopped there
  std::vector<std::string> notes;
  // Per source (NIC port, interface, GPU), what its readings took (wall time inside its
  // Sample; the calls are syscalls and driver calls, so about its CPU time): where the
  // sampler's cost goes.
  struct SourceCost {
    std::string name;
    uint64_t readings = 0;
    uint64_t total_ns = 0;
    uint64_t max_ns = 0;
  };
  std::vector<SourceCost> sources;

  // CPU time per tick, both threads.
  double CpuNsPerTick() const;
  // CPU time over wall time: the share of one core the sampler used.
  double CpuShare() const;
};

// "<job>.<host>.samples.cltrace", with characters that cannot be in a file name replaced.
std::string SamplesFileName(const std::string& job_id, const std::string& hostname);

class Sampler {
 public:
  // Finds the devices, opens the file and writes the series definitions. Fails only when
  // the options are invalid or the file cannot be created; missing devices or a missing
  // NVML are notes.
  static Result<std::unique_ptr<Sampler>> Create(SamplerOptions options);
  ~Sampler();  // stops, as Stop does, if still running

  // Starts the sampling thread; the first tick is at once.
  void Start();
  // One tick now, on the calling thread (a sampler that was not started): every group
  // if |all|, else the groups due at this tick's index (as the thread would).
  void TickNow(bool all = true);
  // Stops the thread, takes a last reading of every counter (so totals cover the whole
  // run), writes the stats and end records and closes the file.
  SamplerReport Stop();

  const std::string& path() const { return path_; }
  const std::vector<std::string>& notes() const { return notes_; }
  uint32_t series() const { return buffer_.series_count(); }
  size_t devices() const { return sources_.size(); }

 private:
  explicit Sampler(SamplerOptions options);
  void Loop();
  void RunTick(int64_t index, bool all);
  void Flush();
  void AppendStats(int64_t now_ns);
  SamplerReport Report() const;

  SamplerOptions options_;
  std::string path_;
  std::vector<std::string> notes_;
  std::vector<std::unique_ptr<SampleSource>> sources_;
  SampleBuffer buffer_;
  std::unique_ptr<SampleFile> file_;
  std::vector<uint8_t> handoff_;
  int64_t period_ns_ = 0;
  int64_t events_every_ = 1;  // ticks between two readings of the slow group
  int64_t gpu_every_ = 1;     // ... of the GPU metrics
  int64_t flush_ns_ = 0;
  bool stopped_ = false;

  // The thread and its stop signal.
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // under mu_
  int64_t stop_requested_ns_ = 0;  // under mu_: when Stop asked the loop to end (monotonic)

  // Written by whichever thread ticks (never two at once), read after it joined.
  int64_t start_realtime_ns_ = 0;
  int64_t start_monotonic_ns_ = 0;
  int64_t stop_monotonic_ns_ = 0;
  int64_t next_flush_ns_ = 0;
  int64_t next_index_ = 0;
  uint64_t ticks_ = 0;
  uint64_t missed_ = 0;
  uint64_t busy_ns_ = 0;
  uint64_t max_tick_ns_ = 0;
  uint64_t max_late_ns_ = 0;
  std::vector<SamplerReport::SourceCost> source_costs_;  // one per sources_ entry
  uint64_t cpu_ns_ = 0;
};

}  // namespace commlens::recorder::sampler
