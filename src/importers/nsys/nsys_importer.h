// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`, plain or gzipped) into
// the trace model, one rank per profiled process: a report made around `torchrun` or
// `srun` holds every rank's process and is split; a report per rank gives one.
//
// What it fills, per process that ran GPU work or NCCL calls:
//   - GPU activities: CUPTI kernels (demangled names; CUDA graph kernels too), memcpy
//     (bytes, direction), memset, and stream/event synchronisation markers;
//   - host events: CUDA runtime and driver calls (names without nsys's "_v7000" suffix),
//     whose correlation ids link every launch to its GPU activity;
//   - annotations: NVTX ranges and marks of every domain (steps come from top-level
//     ranges named like "step 3", "iteration 3" or "ProfilerStep#3", passes/find_steps);
//   - communication: NCCL's own NVTX ranges, their binary payloads decoded by the export's
//     payload schemas (communicator, message size, root or peer; nvtx_payload.h), one
//     CommOps row per collective or p2p call, matched to the NCCL kernel it launched;
//     process groups by communicator id, with size and this rank from NCCL's init ranges;
//   - counters: GPU_METRICS (per GPU) and NET_NIC_METRIC (per NIC port) series.
// Times are made Unix-epoch nanoseconds with the report's session start.
//
// The rank comes from NCCL's init payload of the process's largest communicator, else from
// RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK / PMI_RANK in the profiled environment (a
// report with one process), else the loader takes it from the file name; notes say which.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::importers {

// True if |head| starts with SQLite's file header ("SQLite format 3").
bool LooksLikeSqlite(std::string_view head);

// Reads the export at |path| (".sqlite" or gzipped). Fails, naming the file, when it is not
// SQLite, not an Nsight Systems export, of an export schema major version commlens does
// not know, locked, or damaged; a row that cannot be used is counted in the rank's stats.
Result<std::vector<model::RankTrace>> ImportNsysExport(const std::string& path);

// The export schema major version commlens reads (META_DATA_EXPORT).
inline constexpr int kNsysSchemaMajor = 3;

}  // namespace commlens::importers
