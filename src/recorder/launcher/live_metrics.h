// `commlens record --prometheus FILE`: live metrics for node_exporter's textfile
// collector, rewritten every second (a temporary file in the same folder, then a rename,
// so the collector never reads half a file). Metrics (docs/recorder.md, "Live metrics"),
// all gauges, labelled job and host:
//
//   commlens_nic_transmit_bytes_per_second{device,kind}   over the last second of samples
//   commlens_nic_receive_bytes_per_second{device,kind}
//   commlens_gpu_utilization_ratio{gpu}                   NVML's, 0 to 1
//   commlens_gpu_memory_utilization_ratio{gpu}
//   commlens_gpu_power_watts{gpu}
//   commlens_gpu_nvlink_transmit_bytes_per_second{gpu}    / _receive_: over all links
//   commlens_sampler_last_sample_timestamp_seconds        Unix time of the newest sample
//   commlens_last_collective_age_seconds{rank}            seconds since the rank's
//                                                         collectives last progressed
//
// The NIC and GPU values come from the sampler's file as it grows (SamplesTail). The age
// of a rank's last collective is now minus the last progress its plugin trace's newest
// alive mark carries (rank_progress.h): the latest start of a collective or p2p op, or
// end of one's kernel channel, proxy step or proxy op. The plugin writes an alive mark at
// every flush (1 s) whether the rank progresses or not, so neither the file's size nor
// its modification time says anything; the mark's progress time does. A rank stuck
// before a collective counts from its last op's end; one waiting inside a collective
// that never ends, from that collective's start. An age well above a few seconds means
// the rank's collectives stopped advancing: alert on it. Only traces of this job written
// on this host since the recording started count; a rank's newest file stands for it. A
// rank with no flush yet, whose trace ended (its last communicator finalized), or whose
// plugin predates format 1.3 has no age; with the recorder switched fully off (control
// file "0") NCCL reports no ops and the age grows although the job runs.
//
// When the recording ends (Stop) the file is removed: node_exporter then stops exporting
// the job's metrics instead of repeating its last values (and ages) for ever.
//
// Threading: Start runs Update on a thread of its own every interval; Stop joins it and
// removes the file. Update alone is for tests.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "recorder/launcher/samples_tail.h"

namespace commlens::recorder::launcher {

struct LiveMetricsOptions {
  std::string textfile;      // where the metrics go ("/var/lib/node_exporter/commlens.prom")
  std::string samples_path;  // the sampler's file; empty: no NIC or GPU metrics
  std::string trace_dir;     // where the plugin's traces are; empty: no collective ages
  std::string job_id;        // as in the file names (output_names.h)
  std::string host;
  int64_t start_realtime_ns = 0;  // traces older than this are from an earlier run
  int interval_ms = 1000;
  int64_t rate_window_ns = 1'000'000'000;  // rates over this much sampled time
};

class LiveMetrics {
 public:
  explicit LiveMetrics(LiveMetricsOptions options);
  ~LiveMetrics();

  // Reads new samples and the traces' last alive marks, and renders the text at |now_ns|
  // (CLOCK_REALTIME).
  std::string Render(int64_t now_ns);
  // Render and write the file; an error when it cannot be written.
  Status Update(int64_t now_ns);

  void Start();
  void Stop();
  // The first write error, if any (the thread goes on trying).
  std::string first_error() const;

 private:
  void Loop();
  // Each rank's last progress, from its newest trace of this job and host.
  std::map<int, int64_t> LastProgressByRank();

  LiveMetricsOptions options_;
  SamplesTail tail_;
  std::map<std::string, int64_t> last_progress_;  // by trace path: the last alive mark read
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string first_error_;
};

// Writes |text| to |path| through a temporary file beside it and a rename.
Status WriteFileAtomically(const std::string& path, const std::string& text);

// A Prometheus label value: backslash, double quote and newline escaped.
std::string PrometheusLabel(std::string_view value);

}  // namespace commlens::recorder::launcher
