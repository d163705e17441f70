// The trace model: what every importer writes and every analysis reads.
//
// One |RankTrace| per rank, made of columnar, append-only tables whose rows hold
// integers and interned string ids only (no per-event heap object). Time is int64
// nanoseconds on the rank's host clock, as Unix-epoch nanoseconds where the source says
// where its clock starts (Kineto: baseTimeNanoseconds + ts); importers convert once.
//
// Cross-rank: ranks are matched by rank number; collectives by (process group, sequence
// number). A |Trace| is the set of ranks of one job plus the files that failed to load.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/collective.h"
#include "model/import_stats.h"
#include "model/string_pool.h"

namespace commlens::model {

using TimeNs = int64_t;
constexpr uint32_t kNoIndex = UINT32_MAX;
constexpr TimeNs kNoTime = INT64_MIN;

// Kernel classes (docs/analysis.md): communication = NCCL kernels, memory = memcpy/memset,
// compute = other kernels; sync markers (cuda_sync) are |kOther|, never compute.
enum class ActivityClass : uint8_t { kCompute, kCommunication, kMemory, kOther };
enum class ActivityKind : uint8_t { kKernel, kMemcpy, kMemset, kSync };

// GPU activity: kernels, copies, sets, and stream-bound sync markers.
struct GpuActivities {
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<StringId> name;
  std::vector<int32_t> device;
  std::vector<int32_t> stream;
  std::vector<int64_t> correlation;  // links to the host launch; 0 when absent
  std::vector<ActivityKind> kind;
  std::vector<ActivityClass> cls;
  std::vector<uint32_t> comm;        // row in CommOps, or kNoIndex
  std::vector<TimeNs> launch;        // start of the host call that launched it, or kNoTime

  size_t size() const { return start.size(); }
  void Reserve(size_t n);
  uint32_t Append(TimeNs s, TimeNs e, StringId n, int32_t dev, int32_t strm, int64_t corr,
                  ActivityKind k, ActivityClass c);
};

enum class HostKind : uint8_t {
  kCpuOp,           // aten ops and other record_function ranges
  kUserAnnotation,  // user ranges, ProfilerStep#N
  kRuntime,         // CUDA runtime calls (cudaLaunchKernel, ...)
  kDriver,          // CUDA driver calls (cuLaunchKernel, ...)
  kPython,          // python_function
  kGpuAnnotation,   // gpu_user_annotation (projected onto a GPU stream)
  kOther
};

// Host-side ranges.
struct HostEvents {
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<StringId> name;
  std::vector<int64_t> tid;
  std::vector<int64_t> correlation;  // runtime/driver calls: the launch correlation id
  std::vector<HostKind> kind;

  size_t size() const { return start.size(); }
  void Reserve(size_t n);
  uint32_t Append(TimeNs s, TimeNs e, StringId n, int64_t t, int64_t corr, HostKind k);
};

struct ProcessGroup {
  std::string name;         // PyTorch "Process Group Name" ("0", "1", ...) or NCCL comm name
  std::string description;  // "default_pg", "dp", "tp", "ep", ... when known
  std::vector<int> ranks;   // global ranks, empty when unknown
  int size = 0;
  uint64_t comm_hash = 0;   // NCCL communicator id when the source has it
};

// Communication operations, one row per collective or p2p call on this rank.
struct CommOps {
  std::vector<TimeNs> start;       // GPU start (kernel begin), or host time if no GPU timing
  std::vector<TimeNs> end;
  std::vector<CommOp> op;
  std::vector<StringId> dtype;
  std::vector<int64_t> in_elems;
  std::vector<int64_t> out_elems;
  std::vector<int64_t> bytes;      // nccl-tests size: max(send, recv) bytes of this rank
  std::vector<uint32_t> group;     // index in RankTrace::groups, kNoIndex if unknown
  std::vector<int64_t> seq;        // sequence number within the group, -1 if unknown
  std::vector<int32_t> peer;       // p2p peer or collective root, -1 if none
  std::vector<uint32_t> activity;  // row in GpuActivities, kNoIndex (native traces)
  std::vector<StringId> algorithm; // "RING", "TREE", ... when known
  std::vector<StringId> protocol;  // "LL", "LL128", "SIMPLE" when known
  std::vector<int16_t> channels;   // -1 if unknown
  std::vector<TimeNs> enqueue;     // host enqueue time, 0 if unknown

  size_t size() const { return start.size(); }
  uint32_t Append(TimeNs s, TimeNs e, CommOp o, StringId dt, int64_t in, int64_t out,
                  int64_t b, uint32_t g, int64_t sq, int32_t pr, uint32_t act);
};

// Name prefix of the PyTorch profiler's step ranges ("ProfilerStep#12").
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

struct ProfilerStep {
  int64_t number = 0;  // N of ProfilerStep#N
  TimeNs start = 0;
  TimeNs end = 0;
};

struct CounterSeries {
  std::string name;  // "nic.mlx5_0.port_xmit_data"
  std::string unit;  // "bytes", "packets", "percent"
  std::vector<TimeNs> time;
  std::vector<double> value;
};

struct Device {
  int id = 0;
  std::string name;
  int sm_count = 0;
  int64_t memory_bytes = 0;
};

struct RankTrace {
  int rank = -1;
  int world_size = 0;
  std::string path;          // the file it came from
  std::string format;        // "kineto", "native"
  std::string backend;       // "nccl", "gloo", ...
  std::string nccl_version;
  std::string hostname;
  std::vector<Device> devices;
  std::vector<std::string> notes;  // what the importer assumed ("rank taken from file name")

  StringPool strings;
  GpuActivities gpu;
  HostEvents host;
  CommOps comms;
  std::vector<ProcessGroup> groups;
  std::vector<ProfilerStep> steps;  // sorted by start
  std::vector<CounterSeries> counters;
  ImportStats stats;
  uint64_t input_bytes = 0;  // size of the decoded input

  uint32_t FindOrAddGroup(const ProcessGroup& g);
};

struct FileError {
  std::string path;
  std::string message;
};

struct Trace {
  std::vector<RankTrace> ranks;      // sorted by rank, one per rank
  std::vector<FileError> failures;   // files that could not be read at all
  std::vector<std::string> warnings; // job-level notes (duplicate ranks, ...)
};

}  // namespace commlens::model
