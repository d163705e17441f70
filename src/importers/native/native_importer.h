// Reads a commlens native trace (docs/formats.md) into one rank of the trace model: a
// trace of the NCCL profiler plugin (one process), or a samples file of the sampler (one
// host's NIC counters and GPU metrics: counter series only, RankTrace::host_counters_only,
// rank -1; see sampler_records.h).
//
// What it fills: rank, world size, host, one ProcessGroup per communicator, one CommOps
// row per recorded collective / p2p op (GPU start and end from the kernel-channel
// timers converted to the host clock, see gpu_clock.h; host enqueue times when NCCL
// gave no kernel timing), the NCCL API calls as host events, the bytes of network proxy
// operations as a counter series, and stats: events the recorder dropped
// (kDroppedByRecorder), a torn final record (kTruncatedRecord), a record failing its
// checksum (kBadRecord).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::importers {

// True if |first_bytes| (8 are enough) start with the native trace magic.
bool LooksLikeNativeTrace(std::string_view first_bytes);

// Reads the whole file. Fails only when it is not a native trace at all (missing,
// unreadable, bad header or version); damage after the header is counted in stats.
Result<model::RankTrace> ImportNativeTrace(const std::string& path);

}  // namespace commlens::importers
