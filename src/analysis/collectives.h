// Collective operations: a job-level table per (process group, op, message-size bucket)
// with count, time (sum, p50, p99), bytes and bandwidth, and the cross-rank view that
// matches the k-th collective of a group on every rank.
//
// Bandwidth follows nccl-tests: bytes = max(send, recv) bytes of one rank,
// algbw = bytes / time, busbw = algbw * factor(op, group size) (model/bus_bandwidth.h).
// A bucket's algbw is its total bytes over its total time (time-weighted mean). Two
// times, named apart so they cannot be confused: the kernel time (what the GPU spent,
// waiting for the last member included) and the transfer time (after the last member
// arrived, arrivals.h): only the second says what the fabric delivered.
//
// Durations are summarized in a mergeable log histogram (log_histogram.h): p50/p99 are
// within 0.4% of the exact nearest-rank values, and summaries of parts of the job merge
// into exactly the summary of the whole.
//
// Cross-rank (ranks share one clock on one host; see docs/analysis.md): the matched-ops
// table (model::MatchedOps) restricted to the ops in each rank's window; for each
// operation seen on two or more ranks, the spread of its start times; per rank, the part
// of each such op spent waiting for the last rank to arrive (latest start - own start,
// at most its duration) and the rest, transferring.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/arrivals.h"
#include "analysis/bench_curve.h"
#include "analysis/log_histogram.h"
#include "analysis/window.h"
#include "model/trace.h"

namespace commlens::analysis {

struct CollectiveBucket;
// A bucket's op as reports name it: "send_recv batch" for batches, else the op's name.
std::string BucketOpName(const CollectiveBucket& b);

struct CollectiveBucket {
  std::string group_name;
  std::string group_desc;
  int group_size = 0;
  model::CommOp op = model::CommOp::kUnknown;
  // Batches of ops that ran as one kernel (model::kCommBatched; send/recv batches are
  // op kSendRecv): count, time and bytes are per batch, its size the sum of its ops (both
  // directions), so its bandwidth is the batch's, not one direction's.
  bool batched = false;
  std::map<model::CommOp, uint64_t> batch_ops;  // batches: the calls in them, per op
  int64_t size_lo = -1;  // bytes bucket [size_lo, size_hi); -1 when sizes are unknown
  int64_t size_hi = -1;
  uint64_t count = 0;    // operations summed over ranks
  // Of those, the ones without GPU timing (model::kCommNoGpuTiming: a recording that
  // sampled kernel timing, --kernel-sample, or an op that never ended): counted, but
  // their host times stay out of the durations, bytes and bandwidths below.
  uint64_t untimed = 0;
  int ranks = 0;         // ranks that ran at least one
  model::TimeNs total = 0;
  model::TimeNs p50 = 0;
  model::TimeNs p99 = 0;
  model::TimeNs max = 0;
  int64_t bytes = 0;     // sum over operations
  double kernel_algbw_gbps = 0;  // from the kernel time: waiting for the last member included
  double kernel_busbw_gbps = 0;
  LogHistogram durations;  // the distribution p50/p99/max come from

  // The operations whose last member's arrival is known (arrivals.h): their kernel time,
  // of it the transfer (after the last member started), their bytes, and the bandwidth
  // from the transfer time.
  uint64_t transfer_count = 0;
  model::TimeNs transfer_kernel = 0;
  model::TimeNs transfer = 0;
  int64_t transfer_bytes = 0;
  double transfer_algbw_gbps = 0;
  double transfer_busbw_gbps = 0;
  // The rank whose late arrival the others waited for longest in this bucket; -1 if none.
  int waited_for_rank = -1;
  model::TimeNs waited_for_time = 0;
  // The benchmark's busbw at this bucket's mean size and group size (bench_curve.h);
  // -1 without a benchmark for it.
  double bench_busbw_gbps = -1;

  // Share of the measured ops' kernel time spent waiting for the last member; -1 unknown.
  double wait_share() const {
    return transfer_kernel > 0 ? static_cast<double>(transfer_kernel - transfer) / static_cast<double>(transfer_kernel)
                               : -1;
  }
};

struct GroupSkew {
  std::string group_name;
  std::string group_desc;
  uint64_t matched = 0;     // collectives seen on every rank that ran them
  uint64_t unmatched = 0;   // seen on one rank only
  uint64_t partial = 0;     // on two or more ranks, but outside the window on others (left out)
  uint64_t messages = 0;    // p2p messages with both ends (waits only; no skew)
  model::TimeNs skew_p50 = 0;   // start skew: max(start) - min(start) across the ranks
  model::TimeNs skew_p99 = 0;
  model::TimeNs skew_max = 0;
  model::TimeNs end_skew_p50 = 0;  // end skew: max(end) - min(end)
  model::TimeNs end_skew_p99 = 0;
  model::TimeNs end_skew_max = 0;
};

struct RankWait {
  int rank = 0;
  model::TimeNs in_collectives = 0;  // total time in matched collectives
  model::TimeNs waiting = 0;         // of which waiting for the last rank
  uint64_t last_arrivals = 0;        // collectives where this rank started last
  uint64_t matched = 0;              // matched collectives this rank was in
  // Messages received (p2p): time waiting for the matched send to start, and the rest.
  model::TimeNs recv_waiting = 0;
  model::TimeNs recv_transfer = 0;

  model::TimeNs transferring() const { return in_collectives - waiting; }
  double wait_pct() const {  // of the time in collectives; 0 without any
    return in_collectives ? 100.0 * static_cast<double>(waiting) / static_cast<double>(in_collectives) : 0.0;
  }
};

struct CollectiveAnalysis {
  std::vector<CollectiveBucket> buckets;
  std::vector<GroupSkew> groups;
  std::vector<RankWait> ranks;
  uint64_t operations = 0;
  uint64_t phase_timed = 0;  // ops (per rank) whose wait came from NCCL's kernel phases (arrivals.h)

  uint64_t untimed() const;  // operations without GPU timing, summed over buckets
  uint64_t unsized() const;  // operations of unknown message size (no bandwidth), summed over buckets
  uint64_t counted() const;  // operations in the buckets, timed or not
};

// |in_window[r]|: OpsInWindow of rank r; |arrivals|: ComputeArrivals over the same
// window; |bench|: the benchmark's curves, if any.
CollectiveAnalysis AnalyzeCollectives(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                                      const Arrivals& arrivals, const std::vector<BenchCurve>& bench = {});
// The same, from each rank's window.
CollectiveAnalysis AnalyzeCollectives(const model::Trace& trace,
                                      const std::vector<const ActivityWindow*>& windows);

// Messages below this size carry no gradients or activations: barriers (NCCL's is an
// all-reduce of one value), a loss, a gradient norm, the shapes pipeline stages exchange
// at start-up. They have no bandwidth to speak of; sizes unknown (-1) are not small.
inline constexpr int64_t kSmallMessageBytes = 4096;

// Power-of-two bucket [lo, 2*lo) holding |bytes| (lo = 0 for 0 bytes).
std::pair<int64_t, int64_t> SizeBucket(int64_t bytes);
// Nearest-rank percentile of sorted values (p in [0, 100]).
model::TimeNs Percentile(const std::vector<model::TimeNs>& sorted, double p);
// The size of a rank's process group |group| (an index in its groups; kNoIndex: the world):
// as the source gives it, else its member count, else the world size. The n of busbw.
int GroupSizeOf(const model::RankTrace& rank, uint32_t group);
// Per row of |rank.comms|: 1 when the op is in the window (its GPU activity is, or it has
// none: native traces time the op itself).
std::vector<uint8_t> OpsInWindow(const model::RankTrace& rank, const ActivityWindow& window);

}  // namespace commlens::analysis
