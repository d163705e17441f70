// The benchmark's results: what the driver measures, the reporter prints and the JSON
// file holds (docs/bench.md documents the JSON schema). Times are microseconds and
// bandwidths GB/s (1e9 bytes per second), the units of the nccl-tests table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_config.h"

namespace commlens::bench {

// One placement (out-of-place or in-place) of one size.
struct PlacementResult {
  // nccl-tests' method: host wall clock over |iters| back-to-back enqueues, divided.
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  // Wrong elements summed over ranks; nullopt when not checked (--no-check, or an
  // in-place result that is undefined).
  std::optional<int64_t> wrong;
  // From a separate pass with CUDA events around each iteration: per iteration the
  // maximum over ranks, then nearest-rank percentiles over the iterations.
  double p50_us = 0;
  double p99_us = 0;
  double min_us = 0;
  double max_us = 0;

  bool operator==(const PlacementResult&) const = default;
};

struct SizeResult {
  int64_t size_bytes = 0;  // max(send, recv) bytes per rank, nccl-tests' "size"
  int64_t count = 0;       // elements passed to NCCL, nccl-tests' "count"
  int64_t send_bytes = 0;
  int64_t recv_bytes = 0;
  PlacementResult out_of_place;
  PlacementResult in_place;

  bool operator==(const SizeResult&) const = default;
};

// The headline numbers of one collective's sweep (computed by Summarize, stats.h).
struct CollectiveSummary {
  double peak_busbw_gbps = 0;   // maximum out-of-place busbw over the sweep
  int64_t peak_size = 0;        // size where it is reached
  int64_t half_peak_size = 0;   // smallest size whose out-of-place busbw >= peak / 2
  double small_latency_us = 0;  // out-of-place time at the smallest non-empty size
  double small_latency_p50_us = 0;
  int64_t small_size = 0;
  double avg_busbw_gbps = 0;    // mean busbw over all rows and both placements (as
                                // nccl-tests' "Avg bus bandwidth")
  int64_t wrong = 0;            // wrong elements over the sweep

  bool operator==(const CollectiveSummary&) const = default;
};

struct CollectiveResult {
  std::string name;     // "all_reduce", "alltoall", ... (nccl-tests' spelling)
  std::string comm_op;  // model::CommOpName: "all_reduce", "all_to_all", "send_recv"
  std::string dtype;
  std::string redop;    // "sum", ... or "none"
  int root = -1;        // -1 when the collective has no root
  double busbw_factor = 0;
  // Who moved the bytes (backend.h): "nccl" for every collective; alltoall may also run
  // on "nccl-device" or "nvshmem", which are timed out-of-place only (in_place false:
  // their in-place columns are not measured).
  std::string backend = "nccl";
  bool in_place = true;
  std::vector<SizeResult> rows;
  CollectiveSummary summary;

  bool operator==(const CollectiveResult&) const = default;
};

struct GpuInfo {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string name;
  std::string pci_bus_id;
  int64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;

  bool operator==(const GpuInfo&) const = default;
};

// Where and how the run happened.
struct RunInfo {
  std::string tool_version;
  std::string start_time;  // ISO 8601, UTC
  std::string end_time;
  std::string launcher;    // "local", "env", "mpi"
  std::vector<std::string> hosts;  // distinct host names, in rank order
  int nprocs = 1;
  int nranks = 1;
  int gpus_per_process = 1;
  int nccl_version_code = 0;       // e.g. 22809
  std::string nccl_version;        // e.g. "2.28.9"
  int cuda_runtime_version = 0;    // e.g. 13000
  int cuda_driver_version = 0;
  std::vector<GpuInfo> gpus;       // one per rank, in rank order

  bool operator==(const RunInfo&) const = default;
};

struct BenchReport {
  RunInfo run;
  BenchConfig config;
  std::vector<CollectiveResult> collectives;

  int64_t WrongTotal() const {
    int64_t total = 0;
    for (const CollectiveResult& c : collectives) total += c.summary.wrong;
    return total;
  }
};

}  // namespace commlens::bench
