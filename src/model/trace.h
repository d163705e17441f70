// The trace model: what every importer writes and every analysis and exporter reads.
//
// One |RankTrace| per rank, made of columnar, append-only tables whose rows hold
// integers and interned string ids only (no per-event heap object). Time is int64
// nanoseconds on the rank's host clock, as Unix-epoch nanoseconds where the source says
// where its clock starts (Kineto: baseTimeNanoseconds + ts); importers convert once.
//
// Importers only append rows; the finishing passes (passes/finish.h) then sort, link,
// number and classify them the same way for every format. A |Trace| is the job: its
// ranks, the process groups they share (job group ids), the matched-operations table
// that links one collective across ranks, job-level counters, and the files that failed.
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
// Times beyond +-2^62 ns (146 years from the epoch) come from no clock: the difference of
// two such times would overflow in the analyses, so an importer counts such an event as
// bad instead of storing it.
constexpr TimeNs kTimeLimit = TimeNs{1} << 62;
constexpr bool TimeInRange(TimeNs t) { return t > -kTimeLimit && t < kTimeLimit; }

// Process and thread ids as the source gives them (Linux ids fit in 32 bits); -1 when the
// source has none or gives a name instead of a number.
using ThreadId = int32_t;
constexpr ThreadId ToThreadId(int64_t id) { return id >= INT32_MIN && id <= INT32_MAX ? static_cast<ThreadId>(id) : -1; }

// Kernel classes (docs/analysis.md): communication = NCCL kernels, memory = memcpy/memset,
// compute = other kernels; sync markers (cuda_sync) are |kOther|, never compute.
// |kUnclassified| is what an importer appends; the classify pass replaces it, so analyses
// (whose per-class arrays have the first four) never see it.
enum class ActivityClass : uint8_t { kCompute, kCommunication, kMemory, kOther, kUnclassified };
enum class ActivityKind : uint8_t { kKernel, kMemcpy, kMemset, kSync };
// Direction of a memory copy (CUPTI's copy kinds); kNone for everything but memcpy.
enum class CopyKind : uint8_t { kNone, kHtoD, kDtoH, kDtoD, kHtoH, kPtoP, kUnknown };

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
  std::vector<CopyKind> copy;        // memcpy direction
  std::vector<int64_t> bytes;        // memcpy/memset bytes, -1 when unknown or a kernel
  std::vector<uint32_t> comm;        // row in CommOps, or kNoIndex
  std::vector<TimeNs> launch;        // start of the host call that launched it, or kNoTime

  size_t size() const { return start.size(); }
  void Reserve(size_t n);
  // Appends an unclassified row; |cls| is set by the classify pass.
  uint32_t Append(TimeNs s, TimeNs e, StringId n, int32_t dev, int32_t strm, int64_t corr,
                  ActivityKind k);
};

enum class HostKind : uint8_t {
  kCpuOp,    // aten ops and other record_function ranges
  kRuntime,  // CUDA runtime calls (cudaLaunchKernel, ...)
  kDriver,   // CUDA driver calls (cuLaunchKernel, ...)
  kPython,   // python_function
  kOther
};

// Host-side calls: operators, runtime and driver calls, python functions.
struct HostEvents {
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<StringId> name;
  std::vector<ThreadId> pid;
  std::vector<ThreadId> tid;
  std::vector<int64_t> correlation;  // runtime/driver calls: the launch correlation id
  std::vector<HostKind> kind;

  size_t size() const { return start.size(); }
  void Reserve(size_t n);
  uint32_t Append(TimeNs s, TimeNs e, StringId n, int64_t p, int64_t t, int64_t corr, HostKind k);
};

// Annotation ranges: NVTX ranges, PyTorch user annotations (record_function with a user
// name, ProfilerStep#N), their projection onto a GPU stream, and instant marks (start ==
// end). |depth| is the nesting level on its thread (0 outermost), set by the nest pass.
struct Annotations {
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<StringId> name;
  std::vector<StringId> domain;  // NVTX domain ("NCCL", ...); empty for the default domain
  std::vector<ThreadId> pid;
  std::vector<ThreadId> tid;     // host thread; for GPU-side ranges the stream
  std::vector<int32_t> device;   // GPU-side ranges: the device; -1 on the host
  std::vector<int16_t> depth;

  size_t size() const { return start.size(); }
  uint32_t Append(TimeNs s, TimeNs e, StringId n, StringId dom, int64_t p, int64_t t, int32_t dev);
};

// Flow events (Chrome trace s/t/f): arrows between slices that share an id, such as
// PyTorch's forward-to-backward links. Launch-to-kernel links are not kept here: the
// correlation columns hold them.
enum class FlowPhase : uint8_t { kStart, kStep, kEnd };
struct Flows {
  std::vector<int64_t> id;
  std::vector<StringId> category;  // "fwdbwd", ...
  std::vector<FlowPhase> phase;
  std::vector<TimeNs> time;
  std::vector<ThreadId> pid;
  std::vector<ThreadId> tid;

  size_t size() const { return id.size(); }
  void Append(int64_t i, StringId cat, FlowPhase ph, TimeNs t, int64_t p, int64_t th);
};

// A host thread or process as the source names it (Chrome trace metadata).
struct HostThread {
  ThreadId pid = 0;
  ThreadId tid = -1;  // -1: the process itself
  std::string name;
};

struct ProcessGroup {
  std::string name;         // PyTorch "Process Group Name" ("0", "1", ...) or NCCL comm name
  std::string description;  // "default_pg", "dp", "tp", "ep", ... when known
  std::vector<int> ranks;   // global ranks, empty when unknown
  int size = 0;
  uint64_t comm_hash = 0;   // NCCL communicator id when the source has it
  int self = -1;            // this rank's index in the group, -1 when unknown
  uint32_t job_group = kNoIndex;  // index in Trace::groups, set by the job passes
};

// Flags of a communication operation.
enum CommFlags : uint8_t {
  kCommCopyEngine = 1,  // a copy-engine collective (NCCL 2.28+): numbered apart
  kCommBytesPerRank = 2,  // |bytes| is one rank's share and the group's size was unknown to
                          // the importer: the job-groups pass multiplies it by the size
  kCommNoGpuTiming = 4,  // no GPU timing (a recording whose kernel never reported an end, or
                         // kernels not recorded): start and end are host times
  kCommSymmetric = 8,    // NCCL ran a symmetric-memory kernel (profiler ABI v7)
  kCommBatched = 16,     // one of several ops that ran as one kernel (a batch_isend_irecv,
                         // a coalesced group): start and end are the batch's, shared with
                         // the kernel's other rows (GpuActivities::comm names the first)
  kCommBatchNext = 32,   // a batched row that belongs to the batch of the row before it
                         // (a batch's rows are consecutive; its first lacks this flag)
};

// Communication operations, one row per collective or p2p call on this rank.
// For p2p ops (CommOp kSend / kRecv) the direction is the op and |peer| the other end's
// index in the group; |seq| is then the k-th message between the two in that direction,
// so a send and its receive share (group, sender, receiver, seq).
struct CommOps {
  std::vector<TimeNs> start;       // GPU start (kernel begin), or host time if no GPU timing
  std::vector<TimeNs> end;
  std::vector<CommOp> op;
  std::vector<StringId> dtype;
  std::vector<int64_t> in_elems;
  std::vector<int64_t> out_elems;
  std::vector<int64_t> bytes;      // nccl-tests size: max(send, recv) bytes of this rank
  std::vector<uint32_t> group;     // index in RankTrace::groups, kNoIndex if unknown
  std::vector<int64_t> seq;        // sequence number (see above), -1 until numbered
  std::vector<int32_t> peer;       // p2p peer or collective root, -1 if none
  std::vector<uint32_t> activity;  // row in GpuActivities, kNoIndex (native traces)
  std::vector<StringId> algorithm; // "RING", "TREE", ... when known
  std::vector<StringId> protocol;  // "LL", "LL128", "SIMPLE" when known
  std::vector<int16_t> channels;   // -1 if unknown
  std::vector<TimeNs> enqueue;     // host enqueue time, 0 if unknown
  std::vector<uint8_t> flags;      // CommFlags
  std::vector<uint64_t> user_tag;  // the application's profiler tag of the call (NCCL
                                   // profiler ABI v7), 0 if untagged
  std::vector<TimeNs> launch;      // when the host launched its kernel (GpuActivities::
                                   // launch, set by LinkLaunches), kNoTime if unknown
  std::vector<TimeNs> initial_sync;  // how long its kernel's initial barrier waited for the
                                     // peers, on this GPU's clock (NCCL 2.31+ kernel phases,
                                     // symmetric kernels; the channels' mean), kNoTime if unknown

  size_t size() const { return start.size(); }
  uint32_t Append(TimeNs s, TimeNs e, CommOp o, StringId dt, int64_t in, int64_t out,
                  int64_t b, uint32_t g, int64_t sq, int32_t pr, uint32_t act);
};

// Name prefix of the PyTorch profiler's step ranges ("ProfilerStep#12").
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";
// Name prefix of torch.distributed.pipelining's action ranges ("PP:2F5": stage 2's
// forward of micro-batch 5; B, I, W for the backward and its input and weight halves).
inline constexpr std::string_view kPipelineActionPrefix = "PP:";

struct ProfilerStep {
  int64_t number = 0;  // N of ProfilerStep#N
  TimeNs start = 0;
  TimeNs end = 0;
};

// What a counter series measures: a rank's process, one GPU, a host, or a NIC port.
enum class CounterOwner : uint8_t { kRank, kDevice, kHost, kNic };

struct CounterSeries {
  std::string name;  // "nccl.proxy.send_bytes", "port_xmit_data", "sm_active"
  std::string unit;  // "bytes", "packets", "percent", "4 bytes"
  CounterOwner owner = CounterOwner::kRank;
  std::string host;    // the host it was sampled on
  std::string device;  // kDevice: the GPU index; kNic: "mlx5_0:1", "rdmap0s6:1", "eth0"
  bool cumulative = false;  // raw cumulative values (rates are derived in analysis)
  // Cumulative series: the bits the source counter keeps. At 2^width_bits - 1 it wraps to
  // 0, or, if |saturates|, stays there (InfiniBand PMA counters). 64 when unknown.
  uint8_t width_bits = 64;
  bool saturates = false;
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
  std::vector<HostThread> threads;
  std::vector<std::string> notes;  // what the importer assumed ("rank taken from file name")

  StringPool strings;  // every StringId column is listed in host_events.cc (KeepNamedStrings)
  GpuActivities gpu;
  HostEvents host;
  Annotations annotations;
  Flows flows;
  CommOps comms;
  std::vector<ProcessGroup> groups;
  std::vector<ProfilerStep> steps;  // sorted by start
  std::vector<CounterSeries> counters;  // owned by this rank's process or its GPUs
  // The input holds host counters only (a sampler file: NIC counters, GPU metrics of a
  // host) and no rank: |rank| is -1, the tables are empty, and |counters| belong to the
  // job (Trace::counters), not to a rank. The loader moves them there.
  bool host_counters_only = false;
  // The last time the recording process was known to run (a native trace's periodic
  // flush marks and end record), kNoTime when the format does not say: a rank stuck
  // outside NCCL shows no events after its last one, yet ran until then.
  TimeNs alive_until = kNoTime;
  // The trace holds GPU activities but none of the CUDA calls that launched them (a
  // recording whose CUPTI tracer left them out: they cost the job most). Each activity is
  // then placed in the steps by its GPU start (PlacementTime), not by its launch.
  bool launches_unrecorded = false;
  ImportStats stats;
  uint64_t input_bytes = 0;  // size of the decoded input
  // Which of its file's ranks this is (0 but for a file of several processes): how the
  // file's importer finds it again (model/host_events.h).
  uint32_t part = 0;
  // Host events, annotations and flows left out of this model after import (analyze:
  // model/host_events.h); 0 when the tables are whole.
  uint64_t host_events_dropped = 0;
  // The GPU table stayed with the process that imported the rank (analyze --mpi,
  // analysis/rank_summary.h): its row count and its last end; |gpu| is then empty and
  // comm ops name no activity.
  uint64_t gpu_rows_elsewhere = 0;
  TimeNs gpu_last_end = kNoTime;

  // GPU activities of the rank, here or elsewhere.
  uint64_t GpuActivityCount() const { return gpu.size() + gpu_rows_elsewhere; }
  uint32_t FindOrAddGroup(const ProcessGroup& g);
  // Bytes the rank's tables and strings hold (capacity, not size): the model's memory.
  uint64_t MemoryBytes() const;
};

// When GPU activity |row| of |rank| counts as issued, for the steps and the window: its
// launch; its GPU start where the trace recorded no launches at all; else kNoTime.
inline TimeNs PlacementTime(const RankTrace& rank, uint32_t row) {
  const TimeNs launch = rank.gpu.launch[row];
  return launch != kNoTime || !rank.launches_unrecorded ? launch : rank.gpu.start[row];
}


struct FileError {
  std::string path;
  std::string message;
};

// A process group of the job: the per-rank ProcessGroups with the same name.
struct JobGroup {
  std::string name;
  std::string description;
  int size = 0;
  std::vector<int> ranks;
  uint64_t comm_hash = 0;
};

// What a matched operation is: a collective, a copy-engine collective (numbered apart),
// or one p2p message.
enum class MatchKind : uint8_t { kCollective, kCopyEngine, kP2p };

// The matched-operations table: one row per (group, sequence number) of collectives and
// per (group, sender, receiver, sequence number) of p2p messages, holding for every rank
// that ran it the op's row, start and end. Rows are sorted by (group, kind, sender,
// receiver, seq); the members of row k are [first[k], first[k + 1]) of the member
// columns, in rank order. A row with one member ran on one rank only (unmatched). Built
// once per job by the job passes; analyses, exporters and reduces read it.
struct MatchedOps {
  // one per operation
  std::vector<uint32_t> group;  // index in Trace::groups
  std::vector<MatchKind> kind;
  std::vector<int64_t> seq;
  // p2p: the two ends as the source numbers ranks in the group (NCCL comm ranks in
  // recordings; PyTorch's Src/Dst Rank in Kineto traces); -1 for collectives
  std::vector<int32_t> sender;
  std::vector<int32_t> receiver;
  std::vector<uint32_t> first;  // size() + 1 entries
  // one per rank that ran it
  std::vector<uint32_t> rank_index;  // index in Trace::ranks
  std::vector<uint32_t> row;         // row in that rank's CommOps
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;

  size_t size() const { return group.size(); }
  uint32_t members(size_t k) const { return first[k + 1] - first[k]; }
};

// Clock alignment across ranks (passes/align_clocks.h): which ranks share a clock, and
// the offset estimated for each clock group against the first one.
enum class AlignMode : uint8_t {
  kAuto,         // check the clocks; align hosts where the traces name them, else every
                 // rank when the check proves the clocks differ
  kCollectives,  // every rank its own clock group
  kNone          // trust the raw clocks
};

struct ClockOffset {
  int rank = 0;
  std::string host;
  TimeNs offset = 0;  // this rank's clock minus the reference clock; subtracted when applied
  TimeNs bound = 0;   // |true offset - offset| <= bound, if collectives cannot end before
                      // every member started; -1 when no collective linked the clocks
  uint64_t samples = 0;  // matched collectives the estimate used
  bool consistent = true;  // false: the constraints conflict and |bound| is not guaranteed
};

// Whether the clocks can be compared as they are: a symmetric collective (all-reduce,
// all-gather, reduce-scatter, all-to-all) cannot end on one member before another member
// has started it. Each matched one, every member GPU-timed, is checked; more than 1% of
// them breaking the rule by more than kCausalitySlack prove the clocks differ (a few
// single ones are timing noise: a recording's GPU times converted to the host clock can
// be late by the proxy's poll; the alignment sets the same 1% aside as outliers).
struct CausalityCheck {
  static constexpr TimeNs kCausalitySlack = 2'000;  // GPU timestamps of one host agree within about 1 us
  uint64_t checked = 0;
  uint64_t violations = 0;
  TimeNs worst = 0;  // the largest (a member's start - another member's end), when violated
  std::string worst_group;
  int64_t worst_seq = -1;
  int ended_rank = -1, started_rank = -1;  // who ended before whom started, in the worst
  bool violated() const { return violations > 0 && violations * 100 > checked; }
};

struct ClockAlignment {
  AlignMode mode = AlignMode::kAuto;
  bool applied = false;  // times in the model have been moved by the offsets
  // The clock groups aligned: "hosts" or "ranks" ("" when none were).
  std::string aligned_per;
  CausalityCheck raw;      // on the clocks as the traces gave them
  CausalityCheck aligned;  // on the clocks as analyzed (the same as raw when not applied)
  // The check on the raw clocks is why they were aligned (auto: the traces name no host,
  // or the hosts' alignment still broke the rule); one line says so at the top of reports.
  bool aligned_by_check = false;
  std::vector<ClockOffset> ranks;  // one per rank, in Trace::ranks order (empty: not run)
  std::vector<std::string> notes;
};

struct Trace {
  std::vector<RankTrace> ranks;      // sorted by rank, one per rank
  ClockAlignment clock;              // job passes: how the ranks' clocks were aligned
  std::vector<JobGroup> groups;      // the job's process groups (job passes)
  MatchedOps matched;                // operations matched across ranks (job passes)
  std::vector<CounterSeries> counters;  // owned by a host or a NIC, not by a rank
  std::vector<FileError> failures;   // files that could not be read at all
  std::vector<std::string> warnings; // job-level notes (duplicate ranks, ...)
  // The world size the traces state (the largest), and the ranks below it that no input
  // holds: the cross-rank findings then cover part of the job. A trace can claim any
  // world size, so the ranks are listed up to kMissingListed, and counted.
  static constexpr size_t kMissingListed = 1024;
  int world_size = 0;
  int64_t missing_count = 0;
  std::vector<int> missing_ranks;  // the first kMissingListed of them, in order
  // What the nodes' samples files (recorder/sampler) say of the sampling itself, as
  // "<file>: <note>": read costs per device, slow NVML calls, devices gone or back, the
  // sampler's statistics. Kept apart from |warnings|: a node says a dozen of them, so the
  // text report folds them into one line; --json lists them.
  std::vector<std::string> sampler_notes;

  // The decoded inputs of every rank (RankTrace::input_bytes), summed.
  uint64_t InputBytes() const {
    uint64_t bytes = 0;
    for (const RankTrace& r : ranks) bytes += r.input_bytes;
    return bytes;
  }
};

// Whether every member of matched operation |k| has GPU timing. Ops without it (a
// recording made with --kernel-sample or with host times only, a kernel that never
// ended) carry host enqueue times, which cannot be compared with other ranks' execution
// times: the cross-rank analyses and the clock alignment leave such operations out.
inline bool AllGpuTimed(const Trace& t, size_t k) {
  const MatchedOps& m = t.matched;
  for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j)
    if (t.ranks[m.rank_index[j]].comms.flags[m.row[j]] & kCommNoGpuTiming) return false;
  return true;
}

}  // namespace commlens::model
