// NIC counters and GPU metrics over the analysis window, and NIC bytes beside collectives.
//
// Inputs: Trace::counters (a node's samples file: NIC ports, owner kNic, and the host's
// GPUs, owner kDevice) and RankTrace::counters (per-rank GPU metrics, e.g. Nsight's).
//
// NIC ports: a port's series are grouped by (host, device); the series name's prefix
// ("efa.", "ib.", "roce.", "net.", "rdma.") gives the kind. Bytes come from the tx and rx
// data counters (tx_bytes/rx_bytes, or the PMA port_xmit_data/port_rcv_data in 4-byte
// units) through RatesOf, so wraps, resets and gaps are handled there. Errors are the sum
// of the amounts of the counters that count errors, retransmits, drops, discards and
// timeouts (not their byte counters). The line rate is the port's "<kind>.link_rate"
// gauge (bits/s), its largest reading.
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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/counter_rates.h"
#include "analysis/window.h"
#include "model/trace.h"

namespace commlens::analysis {

struct NicPort {
  std::string host;
  std::string device;  // "rdmap16s27:1", "mlx5_0:1", "eth0"
  std::string kind;    // "efa", "infiniband", "roce", "ethernet", "rdma"
  double tx_bytes = 0;
  double rx_bytes = 0;
  uint64_t samples = 0;            // readings of the tx (else rx) data counter in the window
  double errors = 0;               // sum over the error, retransmit and drop counters
  double peak_tx_bytes_per_s = 0;  // largest rate of one sampling interval
  double peak_rx_bytes_per_s = 0;
  double mean_tx_bytes_per_s = 0;  // bytes over the time the intervals with an amount cover
  double mean_rx_bytes_per_s = 0;
  double line_rate_bits_per_s = 0;  // 0: unknown
  uint32_t wraps = 0;               // of the data counters
  uint32_t resets = 0;
  uint32_t gaps = 0;
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

struct WireBytes {
  std::string group;  // the rank's process group name, "" when unknown
  model::CommOp op = model::CommOp::kUnknown;
  int64_t size_lo = -1;  // SizeBucket of the op's bytes
  int64_t size_hi = -1;
  uint64_t count = 0;  // collectives (one rank per host)
  double claimed_bytes = 0;
  double wire_bytes = 0;
  double ratio() const { return claimed_bytes > 0 ? wire_bytes / claimed_bytes : 0; }
};

struct CounterAnalysis {
  std::vector<NicPort> nics;           // by host, then device
  std::vector<GpuMetric> gpu_metrics;  // rank series by rank, then host series
  std::vector<WireBytes> wire;         // buckets with at least one collective
  bool empty() const { return nics.empty() && gpu_metrics.empty(); }
};

// |windows[r]|: the ActivityWindow of rank r; |in_window[r]|: OpsInWindow of rank r.
CounterAnalysis AnalyzeCounters(const model::Trace& trace,
                                const std::vector<const ActivityWindow*>& windows,
                                const std::vector<std::vector<uint8_t>>& in_window);

// Amount of |rates| in [from, to), each interval's amount spread evenly over it.
double AmountBetween(const CounterRates& rates, model::TimeNs from, model::TimeNs to);

}  // namespace commlens::analysis
