// What one `commlens bench` run measures: the configuration struct (no globals), the
// datatypes and reduction operators it knows, and the parsers for sizes ("1G"),
// durations ("60s") and the size sweep. Everything here is CPU-only and unit-tested.
//
// Units: sizes in bytes (K/M/G suffixes are powers of 1024, as in nccl-tests), times as
// std::chrono durations.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "bench/types.h"
#include "common/status.h"
#include "model/collective.h"

namespace commlens::bench {

struct DataTypeInfo {
  DataType type;
  std::string_view name;  // nccl-tests' name: "float", "bfloat16", "f8e4m3", ...
  int size;               // bytes per element
  // Largest integer L such that every integer in [0, L] is exact in the type; the
  // verifiable inputs keep every partial result within it (see verify.h).
  int64_t exact_limit;
};

const DataTypeInfo& Info(DataType type);
// Accepts nccl-tests' names and the usual aliases (f32, fp16, bf16, int, ...).
std::optional<DataType> DataTypeFromName(std::string_view name);
std::string_view RedOpName(RedOp op);
std::optional<RedOp> RedOpFromName(std::string_view name);

// How the processes of a run find each other.
enum class Launcher : uint8_t {
  kAuto,   // env/MPI when a launcher's variables say there is more than one process
  kLocal,  // one process driving -g GPUs
  kEnv,    // torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (also read from
           // mpirun's OMPI_COMM_WORLD_* and srun's SLURM_*), TCP rendezvous
  kMpi,    // mpirun; the NCCL unique id is broadcast with MPI (non-portable builds)
};
std::string_view LauncherName(Launcher launcher);
std::optional<Launcher> LauncherFromName(std::string_view name);

// Defaults live here and only here; the CLI and docs/bench.md refer to them.
struct BenchConfig {
  std::vector<model::CommOp> collectives = {model::CommOp::kAllReduce};
  // Who runs the collectives (backend.h). Only alltoall has GPU-initiated backends; with
  // several, alltoall runs once per backend and a side-by-side table follows.
  std::vector<Backend> backends = {Backend::kNccl};
  int64_t min_bytes = 8;
  int64_t max_bytes = 128ll << 20;
  int step_factor = 2;            // > 1: multiply; otherwise add step_bytes
  int64_t step_bytes = 1ll << 20;
  int gpus_per_process = 0;       // 0: all visible GPUs (local launch) or 1 (multi-process)
  DataType dtype = DataType::kFloat;
  RedOp op = RedOp::kSum;
  int root = 0;
  int iters = 20;                 // nccl-tests -n default
  int warmup = 5;                 // nccl-tests -w default is 1
  // Busy time at the largest size before each collective's warm-up, so that the first
  // sizes are not timed while clocks still ramp up after communicator setup (0: none).
  std::chrono::milliseconds spin_up{300};
  bool check = true;
  bool graph = false;
  int ctas = 128;                 // CTAs of the GPU-initiated backends' exchange kernel (128:
                                  // 2 x H200 NVLink near full from 16 MiB; 32 reached 60%)
  std::string json_path;
  std::chrono::milliseconds timeout{60'000};
  Launcher launcher = Launcher::kAuto;
  int port = 0;                   // 0: from MASTER_PORT
  // Test hook: when >= 0, the byte pattern 0xFF is written over this element of the
  // output of rank 0 after each correctness-check run and before the comparison, so a
  // test can prove that the comparison catches a corrupted result.
  int64_t corrupt_element_for_test = -1;

  bool operator==(const BenchConfig&) const = default;
};

// "8", "1K", "16M", "1G", "0.5M" (K/M/G = 1024-based, case-insensitive, optional "B").
Result<int64_t> ParseByteSize(std::string_view text);
// "60", "60s", "500ms", "2m", "1h"; a bare number is seconds.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
// Human form of a byte size: "8 B", "64 KiB", "1 GiB", "1.5 MiB".
std::string FormatBytes(int64_t bytes);

// The sizes nccl-tests visits: min, then *factor (factor > 1) or +step, while <= max.
std::vector<int64_t> SizeSweep(int64_t min_bytes, int64_t max_bytes, int step_factor,
                               int64_t step_bytes);
std::vector<int64_t> SizeSweep(const BenchConfig& config);

// Checks ranges and combinations; the message names the offending option.
Status Validate(const BenchConfig& config);

}  // namespace commlens::bench
