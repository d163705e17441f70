// NIC counters and GPU metrics over the analysis window, and NIC bytes beside collectives.
//
// Inputs: Trace::counters (a node's samples file: NIC ports, owner kNic, and the host's
// GPUs, owner kDevice) and RankTrace::counters (per-rank GPU metrics, e.g. Nsight's).
//
// NIC ports: a port's series are grouped by (host, device); the series name's prefix
// ("efa.", "ib.", "roce.", "net.", "rdma.") gives the kind. Bytes come from the tx and rx
// data counters (tx_bytes/rx_bytes, or the PMA port_xmit_data/port_rcv_data in 4-byte
// units) through RatesOf, so wraps, resets and gaps are handled there. The line rate is
// the port's "<kind>.link_rate" gauge (bits/s), its largest reading.
//
// Errors: the counters that count errors, retransmits, drops, discards, timeouts, link
// downs and impaired or unresponsive peers (events, not their byte counters; the word
// list is IsErrorCounter in nic_analysis.cc). They are events, not a flow: an interval
// that overlaps the window counts whole, since its increase may have come at any moment
// inside it. Each counter that grew is kept by name with the sampling interval of its
// first increase; a port with any is one NicFinding (warning severity): host, device,
// which counters and how many, when the first increase came (the interval, from the
// host's first counter reading, and the profiler steps of the host's lowest rank it
// overlaps), in plain words.
//
// The window: when any rank of a host had its GPU activities filtered (ProfilerStep
// window), that host's counters are clipped to [first selected activity start, last
// selected activity end] over its ranks; otherwise every sample counts. Amounts between
// two samples are taken as spread evenly over the interval (the counter grows linearly
// between readings), so an interval cut by the window or by a collective contributes the
// overlapping share of its amount. An interval the sampler missed (a gap) contributes
// nothing: the bytes it moved are unknown.
//
// Wire bytes against claimed bytes, per (group, op, size bucket): for each host, one rank
// (the lowest on the host) stands for the host, because co-located ranks run the same
// collective at the same time over the same NICs and summing them would count the NIC's
// bytes once per rank. For each of its collectives with a GPU start and end, the NIC tx
// bytes of the host's ports during the collective (RDMA ports when the host has any, else
// its network interfaces) are the wire bytes; the claimed bytes are the op's bytes
// (nccl-tests size) times the ranks on that host. The ratio is wire / claimed; traffic of
// other work on the same NIC during a collective counts as wire bytes. Collectives outside
// the time the host's data counters cover are left out (their NIC bytes are unknown).
// The NIC rate of a bucket is its wire bytes over the summed GPU duration of its
// collectives (on the representative ranks, so a time-weighted mean over hosts; a
// collective's duration includes any wait for its peers); its line rate is the same
// time-weighted mean of the summed line rates of the ports counted for each collective,
// unknown when any of them has none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/window.h"
#include "model/counter_rates.h"
#include "model/trace.h"

namespace commlens::analysis {

// An error, retransmit or drop counter of a port that grew in the window.
struct NicCounterGrowth {
  std::string name;           // the counter: "rx_errors", "link_downed", "retrans_pkts"
  double amount = 0;          // its growth in the window (> 0)
  bool lower_bound = false;   // it sat at its saturating maximum at times: at least |amount|
  model::TimeNs first_from = 0;  // the sampling interval in which it first grew
  model::TimeNs first_to = 0;
};

struct NicPort {
  std::string host;
  std::string device;  // "rdmap16s27:1", "mlx5_0:1", "eth0"
  std::string kind;    // "efa", "infiniband", "roce", "ethernet", "rdma"
  double tx_bytes = 0;
  double rx_bytes = 0;
  uint64_t samples = 0;            // readings of the tx (else rx) data counter in the window
  double errors = 0;               // sum over the error, retransmit and drop counters
  std::vector<NicCounterGrowth> error_counters;  // those of them that grew, in name order
  double tx_packets = 0;           // sent, from the tx packet counter; 0: none recorded
  double peak_tx_bytes_per_s = 0;  // largest rate of one sampling interval
  double peak_rx_bytes_per_s = 0;
  double mean_tx_bytes_per_s = 0;  // bytes over the time the intervals with an amount cover
  double mean_rx_bytes_per_s = 0;
  double line_rate_bits_per_s = 0;  // 0: unknown
  uint32_t wraps = 0;               // of the data counters
  uint32_t resets = 0;
  uint32_t gaps = 0;

  // A rate in bytes/s as a percentage of the line rate; none when that is unknown.
  std::optional<double> LinePct(double bytes_per_s) const {
    const double line_gbps = line_rate_bits_per_s * 1e-9;
    if (line_gbps <= 0) return std::nullopt;
    return 100.0 * (bytes_per_s * 8e-9) / line_gbps;
  }
  std::optional<double> peak_line_pct() const { return LinePct(std::max(peak_tx_bytes_per_s, peak_rx_bytes_per_s)); }
  std::optional<double> mean_line_pct() const { return LinePct(std::max(mean_tx_bytes_per_s, mean_rx_bytes_per_s)); }
};

// One gauge series of a GPU (cumulative device series, energy or NVLink KiB, are left out).
struct GpuMetric {
  int rank = -1;  // -1: sampled by the host (a samples file), not a rank
  std::string host;
  std::string device;
  std::string name;
  std::string unit;
  uint64_t samples = 0;  // in the window
  double mean = 0;       // of the samples (the sampler reads at a fixed rate)
  double min = 0;
  double max = 0;
};

// Every series of one GPU metric (all GPUs and ranks) over all their samples.
struct GpuMetricTotal {
  std::string name;
  std::string unit;     // the last series' (series of one name share their unit)
  size_t series = 0;
  uint64_t samples = 0;
  double mean = 0;      // of every sample: the series' means weighted by their samples
  double min = 0;
  double max = 0;
};

struct WireBytes {
  std::string group;  // the rank's process group name, "" when unknown
  model::CommOp op = model::CommOp::kUnknown;
  int64_t size_lo = -1;  // SizeBucket of the op's bytes
  int64_t size_hi = -1;
  uint64_t count = 0;  // collectives (one rank per host)
  double claimed_bytes = 0;
  double wire_bytes = 0;
  model::TimeNs collective_ns = 0;  // summed GPU duration of those collectives
  // Sum over those collectives of duration x summed line rate of the ports counted, in
  // bytes: what the ports could have sent; 0 when a port counted has no line rate.
  double line_bytes = 0;
  double ratio() const { return claimed_bytes > 0 ? wire_bytes / claimed_bytes : 0; }
  // NIC tx bytes per second while the collectives ran; 0: no duration.
  double wire_bytes_per_s() const {
    return collective_ns > 0 ? wire_bytes / (static_cast<double>(collective_ns) * 1e-9) : 0;
  }
  // Time-weighted line rate of the ports counted, bits/s; 0: unknown.
  double line_rate_bits_per_s() const {
    return collective_ns > 0 ? 8 * line_bytes / (static_cast<double>(collective_ns) * 1e-9) : 0;
  }
  bool line_rate_known() const { return line_bytes > 0; }
  // wire_bytes_per_s() as a share of line_rate_bits_per_s(), 0..1; 0 also when unknown.
  double line_share() const { return line_bytes > 0 ? wire_bytes / line_bytes : 0; }
};

// A port whose error, retransmit or drop counters grew in the window.
struct NicFinding {
  static constexpr const char* kSeverity = "warning";
  size_t port = 0;  // index in CounterAnalysis::nics
  // The sampling interval that holds the port's first increase: the earliest start and
  // the earliest end among its counters' first intervals.
  model::TimeNs first_from = 0;
  model::TimeNs first_to = 0;
  model::TimeNs since_first_reading = 0;  // first_from after the host's first NIC reading
  int64_t step_first = -1;  // ProfilerStep#N of the host's lowest rank that the interval
  int64_t step_last = -1;   // overlaps, first and last; -1: none
  std::string text;         // the finding in plain words, one paragraph
};

struct CounterAnalysis {
  std::vector<NicPort> nics;           // by host, then device
  std::vector<GpuMetric> gpu_metrics;  // rank series by rank, then host series
  std::vector<GpuMetricTotal> gpu_metric_totals;  // of |gpu_metrics|, by name
  std::vector<WireBytes> wire;         // buckets with at least one collective
  std::vector<NicFinding> findings;    // ports whose error counters grew, in nics order
  bool empty() const { return nics.empty() && gpu_metrics.empty(); }
};

// The series of each metric name summed over GPUs and ranks (CounterAnalysis::
// gpu_metric_totals), by name.
std::vector<GpuMetricTotal> TotalGpuMetrics(const std::vector<GpuMetric>& metrics);

// |windows[r]|: the ActivityWindow of rank r; |in_window[r]|: OpsInWindow of rank r.
CounterAnalysis AnalyzeCounters(const model::Trace& trace,
                                const std::vector<const ActivityWindow*>& windows,
                                const std::vector<std::vector<uint8_t>>& in_window);

// Amount of |rates| in [from, to), each interval's amount spread evenly over it.
double AmountBetween(const model::CounterRates& rates, model::TimeNs from, model::TimeNs to);

}  // namespace commlens::analysis
