// The commlens native trace format, version 1. docs/formats.md is the reference; this
// header is its only definition in code, shared by the writers (the NCCL profiler
// plugin, the NIC/GPU sampler) and the reader (importers/native).
//
// A file is a 32-byte header followed by self-delimiting records:
//
//   record = u32 crc32 | u32 payload_size | u16 type | u16 reserved (0) | payload
//
// The CRC-32 (IEEE, the zlib one) covers everything after the crc field: size, type,
// reserved and payload. The file is only ever appended to, one whole flush at a time,
// so a crash leaves every record that was flushed intact and at most one torn record at
// the end, which the reader recognises and reports.
//
// All integers are little-endian. Payloads are the structs below, byte for byte. A
// reader accepts a payload longer than the struct it knows (later minor versions append
// fields) and zero-fills a shorter one if it holds at least kMinPayload bytes.
//
// Times are int64 nanoseconds. Host times are CLOCK_REALTIME (Unix epoch), the domain of
// Kineto's baseTimeNanoseconds + ts. GPU times are raw %globaltimer values; the reader
// converts them with the offset estimated from the samples in KernelTimingRecord.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commlens::native_format {

// "\x89" catches 7-bit transports, "\r\n" catches line-ending conversion.
inline constexpr unsigned char kMagic[8] = {0x89, 'C', 'L', 'T', 'R', 'C', '\r', '\n'};
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 9;  // 1.1: sampler records (11-14), ProcessRecord.writer;
                                              // 1.2: OpDetail records (15), kOpFlagSymmetric;
                                              // 1.3: MarkRecord.last_progress_ns;
                                              // 1.4: the CUPTI tracer's records (16-19);
                                              // 1.5: KernelPhase records (20);
                                              // 1.6: StreamId records (21);
                                              // 1.7: LaunchTiming, LaunchTimer records (22-23);
                                              // 1.8: MarkKind::kControlHostOnly;
                                              // 1.9: LaunchTimerRecord.host_ns, host_launches
inline constexpr uint32_t kMaxPayload = 1u << 20;  // larger size fields mean corruption
inline constexpr uint32_t kNoComm = UINT32_MAX;
inline constexpr uint64_t kNoSeq = UINT64_MAX;

struct FileHeader {
  unsigned char magic[8];
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t header_size;  // bytes from the start of the file to the first record
  uint32_t flags;        // none defined in 1.0
  uint32_t reserved[2];
  uint32_t crc32;        // of the 28 bytes before it
};
static_assert(sizeof(FileHeader) == 32);

struct RecordHeader {
  uint32_t crc32;
  uint32_t payload_size;
  uint16_t type;
  uint16_t reserved;
};
static_assert(sizeof(RecordHeader) == 12);

enum class RecordType : uint16_t {
  kString = 1,        // u32 id, then the UTF-8 bytes (no terminator)
  kProcess = 2,       // ProcessRecord, first, after the strings it names (again when NCCL joins a
                      // session CUDA's injection started: the last one holds)
  kComm = 3,          // CommRecord, once per communicator, before its ops
  kOp = 4,            // OpRecord, one per collective / p2p / copy-engine collective
  kKernelTiming = 5,  // KernelTimingRecord, GPU timing of one op (one or more per op)
  kProxyOp = 6,       // ProxyOpRecord, one network proxy operation
  kApi = 7,           // ApiRecord, one NCCL API-level event (profiler ABI v5+)
  kStats = 8,         // StatsRecord, cumulative counters; the last one per comm counts
  kMark = 9,          // MarkRecord, capture window and control transitions
  kEnd = 10,          // EndRecord, clean end of the file
  // 1.1: what the sampler writes (one file per host, recorder/sampler)
  kCounterDef = 11,      // CounterDefRecord, one counter series, before its samples
  kCounterSamples = 12,  // CounterSamplesRecord then u64 values: one reading of a run of series
  kSamplerEvent = 13,    // SamplerEventRecord: a device vanished or came back, a note
  kSamplerStats = 14,    // SamplerStatsRecord, the sampler's cumulative counters; the last counts
  // 1.2: what profiler ABI v7 adds to an op (written only when there is something)
  kOpDetail = 15,  // OpDetailRecord, after its op's OpRecord
  // 1.4: what the CUPTI tracer writes into the rank's file (recorder/cupti_tracer)
  kGpuActivity = 16,  // GpuActivityRecord: a kernel, memcpy, memset or synchronization
  kCudaApi = 17,      // CudaApiRecord: a CUDA runtime or driver call (the launches)
  kRange = 18,        // RangeRecord: an NVTX range or mark, of any domain
  kTracer = 19,       // TracerRecord: the tracer's state and counters; the last one counts
  // 1.5: profiler ABI v7's kernel barrier phases (NCCL 2.31+, symmetric kernels)
  kKernelPhase = 20,  // KernelPhaseRecord: an op's initial sync, compute and final sync
  // 1.6: which CUPTI stream an NCCL launch stream is (the tracer without CUDA calls)
  kStreamId = 21,  // StreamIdRecord, once per stream NCCL launched on, while tracing
  // 1.7: NCCL's kernels timed by CUDA events around their launches (recorder/launch_timer)
  kLaunchTiming = 22,  // LaunchTimingRecord: one KernelLaunch event's kernel, start and end
  kLaunchTimer = 23,   // LaunchTimerRecord: the launch timer's state and counters; the last one counts
};

// Event kinds, numbered as the bit positions of NCCL's event type mask
// (ncclProfileGroup = bit 0 ... ncclProfileCeBatch = bit 14). Index of the per-kind
// counter arrays in StatsRecord.
enum class EventKind : uint8_t {
  kGroup = 0,
  kColl = 1,
  kP2p = 2,
  kProxyOp = 3,
  kProxyStep = 4,
  kProxyCtrl = 5,
  kKernelCh = 6,
  kNetPlugin = 7,
  kGroupApi = 8,
  kCollApi = 9,
  kP2pApi = 10,
  kKernelLaunch = 11,
  kCeColl = 12,
  kCeSync = 13,
  kCeBatch = 14,
  kKernelPhase = 15,  // ABI v7: recorded when asked for (KernelPhaseRecord)
};
inline constexpr int kNumEventKinds = 16;
constexpr uint32_t EventBit(EventKind k) { return 1u << static_cast<unsigned>(k); }

struct ProcessRecord {
  int64_t start_realtime_ns;   // CLOCK_REALTIME when the file was opened
  int64_t start_monotonic_ns;  // CLOCK_MONOTONIC at the same moment
  int32_t pid;
  int32_t global_rank;  // from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID; -1
  int32_t world_size;   // from WORLD_SIZE / OMPI_COMM_WORLD_SIZE / ...; 0 if unknown
  int32_t local_rank;   // from LOCAL_RANK / OMPI_COMM_WORLD_LOCAL_RANK / ...; -1
  uint32_t hostname;        // string id
  uint32_t job_id;          // string id (SLURM_JOB_ID, TORCHELASTIC_RUN_ID), 0 if none
  uint32_t plugin_version;  // string id
  uint32_t abi_version;     // NCCL profiler ABI NCCL loaded us through: 4 to 7
  uint32_t event_mask;      // activation mask while recording
  uint32_t buffer_events;   // slots per event pool and communicator
  uint32_t flush_interval_ms;
  uint32_t writer;  // Writer (1.1; 1.0 files have 0 here: the plugin)
};
static_assert(sizeof(ProcessRecord) == 64);

// Who wrote the file: the plugin (one file per process, ops of a rank) or the sampler
// (one file per host, counters only, no rank).
enum class Writer : uint32_t { kNcclPlugin = 0, kSampler = 1 };

struct CommRecord {
  uint64_t comm_hash;        // NCCL's communicator id (commHash / commId)
  int64_t init_realtime_ns;  // when NCCL called init for it
  uint32_t comm;             // index other records refer to, unique in the file
  uint32_t name;             // string id of commName, 0 if NCCL gave none
  int32_t rank;              // rank in this communicator
  int32_t nranks;
  int32_t nnodes;
  uint32_t abi_version;
};
static_assert(sizeof(CommRecord) == 40);

enum class OpKind : uint8_t { kColl = 0, kP2p = 1, kCeColl = 2 };
inline constexpr uint8_t kOpFlagSend = 1;  // p2p: this rank sends (else receives)
inline constexpr uint8_t kOpFlagSymmetric = 2;  // 1.2: NCCL ran a symmetric-memory kernel

struct OpRecord {
  uint64_t op_id;     // unique in the file; KernelTiming / ProxyOp records refer to it
  uint64_t api_id;    // the API event (ApiRecord.api_id) it came from, 0 if none
  uint64_t count;     // elements, as NCCL counts them (per-rank count of the call)
  uint64_t nccl_seq;  // NCCL's seqNumber (per comm and collective type); kNoSeq for p2p
  uint64_t comm_seq;  // ordinal of this op in its comm (colls) or (comm, peer, dir) (p2p)
  int64_t host_start_ns;  // NCCL started the op (task enqueue began)
  int64_t host_stop_ns;   // NCCL finished enqueuing it (not its completion)
  uint32_t comm;
  uint32_t func;   // string ids: "AllReduce", "ncclFloat32", "RING", "SIMPLE"
  uint32_t dtype;
  uint32_t algo;
  uint32_t proto;
  int32_t root_or_peer;  // collective root, p2p peer, -1 if none
  uint8_t kind;          // OpKind
  uint8_t channels;
  uint8_t warps;
  uint8_t flags;
  uint32_t reserved;
};
static_assert(sizeof(OpRecord) == 88);

// 1.2: what ABI v7 tells of an op beyond its OpRecord. Readers of 1.1 skip it.
struct OpDetailRecord {
  uint64_t op_id;
  uint64_t user_tag;        // the application's per-call profiler tag, 0 if untagged
  uint32_t kernel_variant;  // string id of NCCL's kernel variant name, 0 if none
  uint32_t reserved;
};
static_assert(sizeof(OpDetailRecord) == 24);

inline constexpr uint32_t kTimingFlagBadTimer = 1;  // a channel's stop came before its start

// GPU timing of an op from its kernel-channel events. The plugin writes one per op and
// flush; if an op's channels straddle two flushes there are two, which the reader merges.
struct KernelTimingRecord {
  uint64_t op_id;
  uint64_t gpu_start;  // earliest channel start, %globaltimer ns
  uint64_t gpu_stop;   // latest channel stop, %globaltimer ns
  // min over the channels of (host time NCCL reported the timestamp - the timestamp):
  // an upper bound of (host clock - GPU clock), used to estimate the clock offset.
  int64_t clock_offset_upper;
  uint32_t channels;  // channel events seen
  uint32_t flags;
};
static_assert(sizeof(KernelTimingRecord) == 40);

// The phases of an op's kernel (profiler ABI v7, NCCL 2.31+; symmetric-memory kernels
// only): per channel, an initial sync (the barrier that waits for every peer to arrive),
// the compute (moving and reducing data) and a final sync, on the GPU's %globaltimer.
// The plugin merges the channels of one op, as for KernelTimingRecord, and writes one per
// op that had any phase. The initial sync's length is the op's wait for its peers on this
// GPU's own clock: no clock alignment enters it.
inline constexpr int kKernelPhases = 3;  // 0: initial sync, 1: compute, 2: final sync

struct KernelPhaseRecord {
  uint64_t op_id;
  uint64_t first_start[kKernelPhases];  // earliest channel start of each phase, 0 if none
  uint64_t last_stop[kKernelPhases];    // latest channel stop, 0 if none stopped
  uint64_t total_ns[kKernelPhases];     // the channels' lengths summed (stopped ones)
  uint32_t channels[kKernelPhases];     // channels whose phase stopped
  uint32_t flags;                       // kTimingFlagBadTimer: a stop before its start
};
static_assert(sizeof(KernelPhaseRecord) == 96);

inline constexpr uint8_t kProxyFlagRemote = 1;  // PXN: issued by another process, no op_id

struct ProxyOpRecord {
  uint64_t op_id;  // 0 when the parent op is not known (remote or not recorded)
  int64_t host_start_ns;
  int64_t host_stop_ns;
  int64_t first_step_start_ns;  // 0 if no step was seen
  int64_t last_step_stop_ns;
  uint64_t bytes;       // sum over steps of the bytes NCCL reported per step
  uint64_t net_wait_ns;   // time steps waited on the network (send: SendWait; recv: RecvWait)
  uint64_t gpu_wait_ns;   // waited on the GPU (send: SendGPUWait; recv: RecvGPUWait)
  uint64_t peer_wait_ns;  // send: SendPeerWait; recv: RecvFlushWait
  uint32_t comm;
  int32_t peer;
  int32_t steps;       // steps NCCL announced
  int32_t chunk_size;  // bytes
  int32_t steps_done;  // steps seen to stop
  uint8_t channel;
  uint8_t is_send;
  uint8_t flags;
  uint8_t reserved;
};
static_assert(sizeof(ProxyOpRecord) == 96);

enum class ApiKind : uint8_t { kGroupApi = 0, kCollApi = 1, kP2pApi = 2, kKernelLaunch = 3 };

struct ApiRecord {
  uint64_t api_id;
  uint64_t parent_id;  // enclosing group API event, 0 if none
  uint64_t count;
  uint64_t stream;     // cudaStream_t value, as an opaque number
  int64_t host_start_ns;
  int64_t host_stop_ns;
  int64_t group_start_stop_ns;  // GroupApi: ncclGroupStart returned; 0 otherwise
  int64_t group_end_start_ns;   // GroupApi: ncclGroupEnd was called; 0 otherwise
  uint32_t comm;
  uint32_t func;   // string id
  uint32_t dtype;  // string id
  int32_t root;
  int32_t group_depth;
  uint8_t kind;  // ApiKind
  uint8_t graph_captured;
  uint16_t reserved;
};
static_assert(sizeof(ApiRecord) == 88);

struct StatsRecord {
  uint32_t comm;  // kNoComm: process-wide
  uint32_t reserved;
  int64_t time_ns;
  uint64_t recorded[kNumEventKinds];  // events kept, by EventKind
  uint64_t dropped[kNumEventKinds];   // events lost because the pool was full
  uint64_t orphaned[kNumEventKinds];  // child events whose parent was not recorded
  uint64_t colls_seen;  // collectives NCCL reported, recorded or not
  uint64_t seq_gaps;    // times counting stopped (recorder fully off): comm_seq unreliable
};
static_assert(sizeof(StatsRecord) == 16 + 3 * 8 * kNumEventKinds + 16);

enum class MarkKind : uint32_t {
  kCaptureStart = 1,
  kCaptureStop = 2,
  kControlOn = 3,
  kControlOff = 4,
  kControlCountOnly = 5,
  // Written by every periodic flush (1.1): the process was running at |time_ns|. A rank
  // stuck outside NCCL (data loading, a host deadlock) records no events but still writes
  // these, so a reader can tell "stopped issuing collectives" from "trace cut short".
  // Since 1.3 it is the last record of its flush and carries |last_progress_ns|, so a
  // reader that follows a live file (`commlens record --prometheus`) reads the newest
  // one from the file's last bytes.
  kAlive = 6,
  // The control file at `h` (1.8; readers skip a kind they do not know): recording with
  // host times only, no GPU timing of NCCL's ops, the CUPTI tracer paused.
  kControlHostOnly = 7,
};

struct MarkRecord {
  int64_t time_ns;
  uint32_t what;  // MarkKind
  uint32_t reserved;
  // 1.3, alive marks: when the process's collectives last progressed, CLOCK_REALTIME:
  // the latest start of a collective or p2p op (also outside the capture window), end of
  // a kernel channel or proxy step or op, or of a communicator's init. 0 in an alive
  // mark of a process with no communicator (a session CUDA's injection started, before
  // NCCL's first init or after its last finalize: no collective to wait for), in other
  // marks and in files before 1.3.
  int64_t last_progress_ns;
};
static_assert(sizeof(MarkRecord) == 24);
inline constexpr uint32_t kMarkRecordSize10 = 16;  // the 1.0 layout, without last_progress_ns

enum class EndReason : uint32_t { kFinalize = 0, kProcessExit = 1 };

struct EndRecord {
  int64_t time_ns;
  uint32_t reason;  // EndReason
  uint32_t reserved;
};
static_assert(sizeof(EndRecord) == 16);

// --- CUPTI tracer records (1.4) ----------------------------------------------------
//
// The GPU's activity as CUPTI's activity API reports it, in the rank's own file beside
// the plugin's records. Every time is CLOCK_REALTIME ns, as the file's other host times
// (the tracer has CUPTI stamp its records on that clock). Records arrive in CUPTI's
// buffer order, not sorted; a GPU activity and the API call that launched it share a
// correlation id.

enum class GpuActivityKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kSync = 3 };

// Copy directions, numbered as model::CopyKind.
enum class CopyKindCode : uint8_t { kNone = 0, kHtoD = 1, kDtoH = 2, kDtoD = 3, kHtoH = 4, kPtoP = 5, kUnknown = 6 };

struct GpuActivityRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation;  // the launching API call's (CudaApiRecord), 0 if none
  int64_t bytes;         // memcpy / memset bytes; -1 for kernels and syncs
  uint32_t name;         // string id: the kernel's name; "Memcpy HtoD", "Memset", a sync's kind
  uint32_t stream;       // CUPTI's stream id (unique in the context)
  int32_t device;
  uint32_t context;
  uint8_t kind;       // GpuActivityKind
  uint8_t copy_kind;  // CopyKindCode (memcpy)
  uint16_t reserved;
  uint32_t reserved2;
};
static_assert(sizeof(GpuActivityRecord) == 56);

enum class CudaApiKind : uint8_t { kRuntime = 0, kDriver = 1 };

struct CudaApiRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation;
  uint32_t name;  // string id: "cudaLaunchKernel", "cuLaunchKernelEx", ...
  int32_t tid;    // the calling thread (Linux thread id)
  uint8_t kind;   // CudaApiKind
  uint8_t reserved[7];
};
static_assert(sizeof(CudaApiRecord) == 40);

inline constexpr uint8_t kRangeFlagMark = 1;  // an instant (start == end)

struct RangeRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t name;    // string id: the range's message
  uint32_t domain;  // string id of the NVTX domain; 0 for the default domain
  int32_t tid;      // the thread that pushed or started it
  uint8_t flags;    // kRangeFlag*
  uint8_t reserved[3];
};
static_assert(sizeof(RangeRecord) == 32);

// What the tracer did: it runs (kTracing), or stepped aside because another CUPTI client
// (the PyTorch profiler, Nsight Systems) holds CUPTI, or CUPTI could not start.
enum class TracerState : uint32_t { kTracing = 1, kSteppedAside = 2, kFailed = 3 };

struct TracerRecord {
  int64_t time_ns;
  uint32_t state;   // TracerState
  uint32_t reason;  // string id: why it stepped aside or failed; 0 when tracing
  uint64_t records;  // activity records written so far
  uint64_t dropped;  // records CUPTI dropped (its buffers full) so far
};
static_assert(sizeof(TracerRecord) == 32);

// An NCCL launch stream (ApiRecord.stream of its KernelLaunch events) and CUPTI's id for
// it (GpuActivityRecord.stream): with it NCCL's kernels are found on their stream, in
// launch order, where the CUDA calls that name them by correlation id are not recorded.
struct StreamIdRecord {
  uint64_t stream;     // cudaStream_t value, as in ApiRecord.stream
  uint32_t cupti_stream;
  uint32_t reserved;
};
static_assert(sizeof(StreamIdRecord) == 16);

// The GPU start and end of the kernel an NCCL KernelLaunch event launched, from two CUDA
// events the recorder put on the launch stream just before and just after the launch
// (1.7): every op of the launch ran in that kernel. Host clock (CLOCK_REALTIME), as the
// plugin converted it through an anchor event it timed on both clocks.
struct LaunchTimingRecord {
  uint64_t api_id;       // the KernelLaunch ApiRecord's
  int64_t gpu_start_ns;
  int64_t gpu_end_ns;
  uint32_t anchor_error_ns;  // half the host time the anchor took to be seen: the conversion's bound
  uint32_t reserved;
};
static_assert(sizeof(LaunchTimingRecord) == 32);

enum class LaunchTimerState : uint32_t {
  kTiming = 0,   // CUDA events time NCCL's launches
  kOff = 1,      // not asked for (COMMLENS_LAUNCH_TIMING=off, or the CUPTI tracer times them)
  kFailed = 2,   // CUDA's driver could not be used: NCCL's kernel events time the ops instead
};

// The launch timer's state and counters since the file began; the last one counts.
struct LaunchTimerRecord {
  int64_t time_ns;
  uint32_t state;   // LaunchTimerState
  uint32_t reason;  // string id: why it failed; 0 otherwise
  uint64_t timed;    // launches timed (LaunchTiming records written)
  uint64_t untimed;  // launches left untimed: graph-captured, events all in use, or a CUDA error
  // 1.9: what timing cost the threads that launch NCCL's kernels, so far: the host time of
  // the timer's CUDA calls (its two event records, and their preparation) over
  // |host_launches| launches (those timed). 0 in older files.
  uint64_t host_ns;
  uint64_t host_launches;
};
static_assert(sizeof(LaunchTimerRecord) == 48);
inline constexpr uint32_t kLaunchTimerRecordSize17 = 32;  // the 1.7 layout, without the host cost

// --- Sampler records (1.1) ---------------------------------------------------------
//
// A sampler file holds a ProcessRecord (writer = kSampler, global_rank -1), String
// records, then CounterDefs and, per sampling tick, one CounterSamples record per run
// of series read together (a device's counters). Values are raw: cumulative counters as
// the device reports them (they wrap or saturate at their width), gauges as read.

// Who owns a series; numbered as model::CounterOwner.
enum class CounterOwnerCode : uint8_t { kRank = 0, kGpu = 1, kHost = 2, kNic = 3 };

// What kind of device a series was read from.
enum class DeviceKind : uint8_t {
  kOther = 0,      // an RDMA device that is none of the below (rxe, siw, ...)
  kEfa = 1,        // AWS Elastic Fabric Adapter
  kInfiniBand = 2, // an RDMA port whose link layer is InfiniBand
  kRoce = 3,       // an RDMA port whose link layer is Ethernet
  kNetdev = 4,     // a network interface (/sys/class/net), loopback included
  kGpu = 5,        // a GPU, through NVML
};

inline constexpr uint8_t kCounterFlagCumulative = 1;  // a counter (rates are derived), else a gauge
inline constexpr uint8_t kCounterFlagSaturates = 2;   // stops at its maximum instead of wrapping

struct CounterDefRecord {
  uint32_t series;  // id, unique in the file; a later CounterDef with the same id replaces
                    // this one (the sampler raises |width_bits| when a value exceeds it)
  uint32_t name;    // string ids: "ib.port_xmit_data", "bytes" / "4 bytes" / "packets"
  uint32_t unit;
  uint32_t device;  // "mlx5_0:1", "rdmap16s27:1", "eth0", GPU "0" (NVML index)
  uint32_t host;
  uint32_t source;  // where it is read: a sysfs path, "nvml:<call> <bus id>"
  uint8_t owner;        // CounterOwnerCode
  uint8_t device_kind;  // DeviceKind
  uint8_t width_bits;   // cumulative counters: bits the device keeps (4..64); 0 for gauges
  uint8_t flags;        // kCounterFlag*
  uint32_t reserved;
};
static_assert(sizeof(CounterDefRecord) == 32);

// Header of a CounterSamples payload; |count| u64 values follow, one per series
// first_series, first_series + 1, ... The payload is exactly 16 + 8 * count bytes.
struct CounterSamplesRecord {
  int64_t time_ns;  // CLOCK_REALTIME, the middle of the reads of these values
  uint32_t first_series;
  uint32_t count;
};
static_assert(sizeof(CounterSamplesRecord) == 16);

enum class SamplerEventKind : uint32_t {
  kDeviceGone = 1,      // the device's files went away: its series stop here
  kDeviceBack = 2,      // they came back: the series go on (the counters may have restarted)
  kWidthRaised = 3,     // a value exceeded the assumed width: the CounterDef was rewritten
  kSaturated = 4,       // a saturating counter reached its maximum: later values are stuck
  kNote = 5,            // free text (NVML absent, a source skipped, ...); no series
};

struct SamplerEventRecord {
  int64_t time_ns;
  uint32_t what;          // SamplerEventKind
  uint32_t first_series;  // the series concerned: [first_series, first_series + count)
  uint32_t count;
  uint32_t text;          // string id: what happened, in words
};
static_assert(sizeof(SamplerEventRecord) == 24);

// The sampler's own counters since it started; the last one in the file counts.
struct SamplerStatsRecord {
  int64_t time_ns;
  int64_t start_ns;         // CLOCK_REALTIME of the first tick's deadline
  uint64_t period_ns;       // 1e9 / rate
  uint64_t ticks;           // ticks taken
  uint64_t missed_ticks;    // deadlines skipped because a tick ran past the next one
  uint64_t values;          // values written
  uint64_t dropped_values;  // values lost: the buffer was full (the disk fell behind)
  uint64_t read_errors;     // reads that failed (a value left out, not a device gone)
  uint64_t sampler_cpu_ns;  // CPU time of the sampling thread (reads, encoding, sleeping calls)
  uint64_t writer_cpu_ns;   // CPU time of the thread that writes the file
  uint64_t busy_ns;         // wall time spent inside ticks
  uint64_t max_tick_ns;     // the longest tick
  uint64_t max_late_ns;     // the latest a tick started after its deadline
  uint32_t series;
  uint32_t reserved;
};
static_assert(sizeof(SamplerStatsRecord) == 112);

// The smallest payload a reader accepts for each type (the size of the version that
// introduced the type).
constexpr uint32_t MinPayload(RecordType t) {
  switch (t) {
    case RecordType::kString: return 4;
    case RecordType::kProcess: return sizeof(ProcessRecord);
    case RecordType::kComm: return sizeof(CommRecord);
    case RecordType::kOp: return sizeof(OpRecord);
    case RecordType::kKernelTiming: return sizeof(KernelTimingRecord);
    case RecordType::kProxyOp: return sizeof(ProxyOpRecord);
    case RecordType::kApi: return sizeof(ApiRecord);
    case RecordType::kStats: return sizeof(StatsRecord);
    case RecordType::kMark: return kMarkRecordSize10;
    case RecordType::kEnd: return sizeof(EndRecord);
    case RecordType::kCounterDef: return sizeof(CounterDefRecord);
    case RecordType::kCounterSamples: return sizeof(CounterSamplesRecord);
    case RecordType::kSamplerEvent: return sizeof(SamplerEventRecord);
    case RecordType::kSamplerStats: return sizeof(SamplerStatsRecord);
    case RecordType::kOpDetail: return sizeof(OpDetailRecord);
    case RecordType::kGpuActivity: return sizeof(GpuActivityRecord);
    case RecordType::kCudaApi: return sizeof(CudaApiRecord);
    case RecordType::kRange: return sizeof(RangeRecord);
    case RecordType::kTracer: return sizeof(TracerRecord);
    case RecordType::kKernelPhase: return sizeof(KernelPhaseRecord);
    case RecordType::kStreamId: return sizeof(StreamIdRecord);
    case RecordType::kLaunchTiming: return sizeof(LaunchTimingRecord);
    case RecordType::kLaunchTimer: return kLaunchTimerRecordSize17;
  }
  return 0;
}

}  // namespace commlens::native_format
