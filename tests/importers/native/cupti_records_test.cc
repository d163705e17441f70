// The CUPTI tracer's records (format 1.4) read back: GPU activities with their streams,
// copies and sizes; the CUDA calls that launched them, joined by correlation id
// (passes::FinishRank, as the loader runs it); NVTX ranges of every domain; the tracer's
// state as notes; damaged records counted while the rest loads; a file cut anywhere read
// up to its last whole record.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_writer.h"
#include "passes/finish.h"

namespace commlens::importers {
namespace {

namespace nf = native_format;
using model::ImportIssue;

class CuptiFile {
 public:
  CuptiFile() {
    w_.AppendFileHeader();
    nf::ProcessRecord p{};
    p.pid = 4242;
    p.global_rank = 1;
    p.world_size = 2;
    p.hostname = Str("node3");
    p.plugin_version = Str("commlens test");
    p.abi_version = 6;
    w_.Append(nf::RecordType::kProcess, p);
  }
  uint32_t Str(const std::string& s) {
    w_.AppendString(next_, s);
    return next_++;
  }
  void Gpu(nf::GpuActivityKind kind, const std::string& name, int64_t start, int64_t end, uint64_t corr, uint32_t stream,
           int64_t bytes = -1, nf::CopyKindCode copy = nf::CopyKindCode::kNone) {
    nf::GpuActivityRecord a{};
    a.kind = static_cast<uint8_t>(kind);
    a.name = Str(name);
    a.start_ns = start, a.end_ns = end, a.correlation = corr, a.stream = stream, a.device = 0;
    a.bytes = bytes, a.copy_kind = static_cast<uint8_t>(copy);
    w_.Append(nf::RecordType::kGpuActivity, a);
  }
  void Api(const std::string& name, int64_t start, int64_t end, uint64_t corr, nf::CudaApiKind kind = nf::CudaApiKind::kRuntime) {
    nf::CudaApiRecord a{};
    a.name = Str(name), a.start_ns = start, a.end_ns = end, a.correlation = corr, a.tid = 77;
    a.kind = static_cast<uint8_t>(kind);
    w_.Append(nf::RecordType::kCudaApi, a);
  }
  void Range(const std::string& name, const std::string& domain, int64_t start, int64_t end) {
    nf::RangeRecord r{};
    r.name = Str(name), r.domain = domain.empty() ? 0 : Str(domain), r.start_ns = start, r.end_ns = end, r.tid = 77;
    r.flags = start == end ? nf::kRangeFlagMark : 0;
    w_.Append(nf::RecordType::kRange, r);
  }
  void Tracer(nf::TracerState state, const std::string& reason, uint64_t records, uint64_t dropped) {
    nf::TracerRecord t{};
    t.state = static_cast<uint32_t>(state), t.reason = reason.empty() ? 0 : Str(reason), t.records = records;
    t.dropped = dropped;
    w_.Append(nf::RecordType::kTracer, t);
  }
  void End() {
    nf::EndRecord e{};
    w_.Append(nf::RecordType::kEnd, e);
  }
  // NCCL's side, as the plugin records it.
  void Comm(uint32_t index, int nranks) {
    nf::CommRecord c{};
    c.comm = index, c.comm_hash = 100 + index, c.rank = 1, c.nranks = nranks, c.nnodes = 1;
    w_.Append(nf::RecordType::kComm, c);
  }
  void NcclApi(nf::ApiKind kind, uint64_t id, uint64_t parent, uint32_t comm, int64_t start, int64_t stop,
               uint64_t stream = 0) {
    nf::ApiRecord a{};
    a.api_id = id, a.parent_id = parent, a.comm = comm, a.kind = static_cast<uint8_t>(kind), a.stream = stream;
    a.host_start_ns = start, a.host_stop_ns = stop;
    a.func = Str("AllReduce");
    w_.Append(nf::RecordType::kApi, a);
  }
  void Op(uint64_t op_id, uint64_t api_id, uint32_t comm, int64_t start) {
    nf::OpRecord o{};
    o.op_id = op_id, o.api_id = api_id, o.comm = comm, o.count = 1 << 20, o.comm_seq = op_id;
    o.func = Str("AllReduce"), o.dtype = Str("ncclFloat32"), o.algo = Str("RING"), o.proto = Str("SIMPLE");
    o.host_start_ns = start, o.host_stop_ns = start + 100;
    w_.Append(nf::RecordType::kOp, o);
  }
  void StreamId(uint64_t stream, uint32_t cupti_stream) {
    nf::StreamIdRecord s{};
    s.stream = stream, s.cupti_stream = cupti_stream;
    w_.Append(nf::RecordType::kStreamId, s);
  }
  const std::vector<uint8_t>& bytes() const { return w_.bytes(); }

 private:
  nf::RecordWriter w_;
  uint32_t next_ = 1;
};

std::string Save(const std::vector<uint8_t>& bytes, const std::string& name) {
  auto dir = std::filesystem::path(COMMLENS_BINARY_DIR) / "test-output" / "cupti_records";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

model::RankTrace Load(const std::vector<uint8_t>& bytes, const std::string& name) {
  auto t = ImportNativeTrace(Save(bytes, name));
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return {};
  model::RankTrace r = std::move(t).value();
  passes::FinishRank(&r);
  return r;
}

// One step of a small job as the tracer records it: buffers arrive out of order.
CuptiFile Step() {
  CuptiFile f;
  f.Range("ProfilerStep#3", "", 1'000, 90'000);
  f.Range("forward", "megatron", 2'000, 40'000);
  f.Range("checkpoint", "", 45'000, 45'000);
  f.Api("cudaMemcpyAsync", 2'100, 2'600, 11);
  f.Api("cudaLaunchKernel", 3'000, 3'400, 12);
  f.Api("cuLaunchKernelEx", 5'000, 5'300, 13, nf::CudaApiKind::kDriver);
  f.Api("cudaMemsetAsync", 5'400, 5'500, 14);
  f.Api("cudaStreamSynchronize", 29'000, 30'200, 15);
  // The GPU's side, the second kernel's buffer first.
  f.Gpu(nf::GpuActivityKind::kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 9'000,
        30'000, 13, 14);
  f.Gpu(nf::GpuActivityKind::kMemcpy, "Memcpy HtoD", 2'800, 4'000, 11, 7, 1 << 20, nf::CopyKindCode::kHtoD);
  f.Gpu(nf::GpuActivityKind::kKernel, "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", 4'000, 8'000, 12, 7);
  f.Gpu(nf::GpuActivityKind::kMemset, "Memset", 8'100, 8'300, 14, 7, 4096);
  f.Gpu(nf::GpuActivityKind::kSync, "Stream Synchronize", 30'000, 30'100, 15, 7);
  f.Tracer(nf::TracerState::kTracing, "", 8, 0);
  return f;
}

TEST(CuptiRecords, ActivitiesCallsAndRangesBecomeTheModel) {
  CuptiFile f = Step();
  f.End();
  model::RankTrace t = Load(f.bytes(), "step.cltrace");
  ASSERT_EQ(t.gpu.size(), 5u);
  // In start order, each with its stream, kind, copy and size.
  EXPECT_EQ(t.strings.Get(t.gpu.name[0]), "Memcpy HtoD");
  EXPECT_EQ(t.gpu.kind[0], model::ActivityKind::kMemcpy);
  EXPECT_EQ(t.gpu.copy[0], model::CopyKind::kHtoD);
  EXPECT_EQ(t.gpu.bytes[0], 1 << 20);
  EXPECT_EQ(t.gpu.kind[2], model::ActivityKind::kMemset);
  EXPECT_EQ(t.gpu.bytes[2], 4096);
  EXPECT_EQ(t.gpu.stream[3], 14);
  EXPECT_EQ(t.gpu.kind[4], model::ActivityKind::kSync);
  // Classified as Kineto's are: the GEMM compute, NCCL's kernel communication.
  EXPECT_EQ(t.gpu.cls[1], model::ActivityClass::kCompute);
  EXPECT_EQ(t.gpu.cls[3], model::ActivityClass::kCommunication);
  // The launches joined by correlation id: each activity knows when its call began.
  EXPECT_EQ(t.gpu.launch[0], 2'100);
  EXPECT_EQ(t.gpu.launch[1], 3'000);
  EXPECT_EQ(t.gpu.launch[3], 5'000);
  EXPECT_EQ(t.stats.count(ImportIssue::kUnmatchedCorrelation), 0u);
  // The calls are runtime and driver calls of the process's thread.
  ASSERT_EQ(t.host.size(), 5u);
  EXPECT_EQ(t.host.kind[2], model::HostKind::kDriver);
  EXPECT_EQ(t.host.tid[0], 77);
  EXPECT_EQ(t.host.pid[0], 4242);
  // NVTX ranges with their domains; the profiler step range gives the step.
  ASSERT_EQ(t.annotations.size(), 3u);
  EXPECT_EQ(t.strings.Get(t.annotations.domain[1]), "megatron");
  EXPECT_EQ(t.annotations.start[2], t.annotations.end[2]);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 3);
  EXPECT_EQ(t.stats.total(), 0u);
}

// NCCL's ops timed by their kernels: a group's launch event brackets the CUDA launch call
// whose correlation id names the kernel; the group's ops on that communicator get the
// kernel's GPU times (they had none: no kernel-channel events), and the kernel names its
// op. A group that launched twice on a communicator leaves its ops as they were.
TEST(CuptiRecords, NcclOpsAreTimedByTheirKernels) {
  CuptiFile f;
  f.Comm(0, 2);
  // Group 1: one all-reduce, one launch.
  f.NcclApi(nf::ApiKind::kGroupApi, 1, 0, 0, 1'000, 3'000);
  f.NcclApi(nf::ApiKind::kCollApi, 2, 1, 0, 1'100, 1'200);
  f.Op(10, 2, 0, 1'150);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 3, 1, 0, 2'000, 2'600);
  f.Api("cuLaunchKernelEx", 2'100, 2'500, 71, nf::CudaApiKind::kDriver);
  f.Gpu(nf::GpuActivityKind::kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 10'000,
        40'000, 71, 20);
  // Group 4: launched twice on the same communicator: which op ran where is not known.
  f.NcclApi(nf::ApiKind::kGroupApi, 4, 0, 0, 50'000, 53'000);
  f.NcclApi(nf::ApiKind::kCollApi, 5, 4, 0, 50'100, 50'200);
  f.Op(11, 5, 0, 50'150);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 6, 4, 0, 51'000, 51'500);
  f.Api("cuLaunchKernelEx", 51'100, 51'400, 72, nf::CudaApiKind::kDriver);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 7, 4, 0, 52'000, 52'500);
  f.Api("cuLaunchKernelEx", 52'100, 52'400, 73, nf::CudaApiKind::kDriver);
  f.Gpu(nf::GpuActivityKind::kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 60'000, 70'000, 72, 20);
  f.Gpu(nf::GpuActivityKind::kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 71'000, 80'000, 73, 20);
  f.End();
  model::RankTrace t = Load(f.bytes(), "nccl.cltrace");
  ASSERT_EQ(t.comms.size(), 2u);
  EXPECT_EQ(t.comms.start[0], 10'000);
  EXPECT_EQ(t.comms.end[0], 40'000);
  EXPECT_EQ(t.comms.flags[0] & model::kCommNoGpuTiming, 0u);
  ASSERT_NE(t.comms.activity[0], model::kNoIndex);
  EXPECT_EQ(t.gpu.start[t.comms.activity[0]], 10'000);
  EXPECT_EQ(t.gpu.comm[t.comms.activity[0]], 0u);
  EXPECT_NE(t.comms.flags[1] & model::kCommNoGpuTiming, 0u);  // left with its host times
  EXPECT_EQ(t.comms.start[1], 50'150);
  bool said = false;
  for (const std::string& n : t.notes) said |= n.find("1 ops timed by their kernels' CUPTI records") != std::string::npos;
  EXPECT_TRUE(said);
}

// Without the CUDA calls (the tracer's default kinds): the StreamId records name each
// launch stream's CUPTI id, and the launches on a stream take its NCCL kernels in order,
// each the first one not taken that starts after the launch began. Two communicators on
// two streams, their kernels interleaved in time; a kernel whose launch was not recorded
// (before the first) is passed over; a compute kernel on the same stream is not NCCL's.
TEST(CuptiRecords, NcclOpsAreTimedByStreamOrderWithoutTheCudaCalls) {
  CuptiFile f;
  f.Comm(0, 2);
  f.Comm(1, 2);
  constexpr uint64_t kStreamA = 0x7f00aa, kStreamB = 0x7f00bb;
  f.StreamId(kStreamA, 21);
  f.StreamId(kStreamB, 22);
  const std::string ar = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  f.Gpu(nf::GpuActivityKind::kKernel, ar, 500, 900, 1, 21);  // launched before the recording
  uint64_t id = 10;
  auto op = [&](uint32_t comm, uint64_t stream, int64_t t) {
    const uint64_t group = id++, call = id++;
    f.NcclApi(nf::ApiKind::kGroupApi, group, 0, comm, t, t + 800);
    f.NcclApi(nf::ApiKind::kCollApi, call, group, comm, t + 100, t + 200);
    f.Op(call, call, comm, t + 150);
    f.NcclApi(nf::ApiKind::kKernelLaunch, id++, group, comm, t + 300, t + 700, stream);
  };
  op(0, kStreamA, 1'000);  // -> the kernel at 10'000 on 21
  op(1, kStreamB, 2'000);  // -> 5'000 on 22
  op(0, kStreamA, 3'000);  // -> 40'000 on 21
  op(1, kStreamB, 4'000);  // -> 41'000 on 22
  f.Gpu(nf::GpuActivityKind::kKernel, ar, 5'000, 9'000, 2, 22);
  f.Gpu(nf::GpuActivityKind::kKernel, "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", 9'500, 9'900, 3, 21);
  f.Gpu(nf::GpuActivityKind::kKernel, ar, 10'000, 30'000, 4, 21);
  f.Gpu(nf::GpuActivityKind::kKernel, ar, 40'000, 45'000, 5, 21);
  f.Gpu(nf::GpuActivityKind::kKernel, ar, 41'000, 46'000, 6, 22);
  f.Tracer(nf::TracerState::kTracing, "", 6, 0);
  f.End();
  model::RankTrace t = Load(f.bytes(), "nccl_by_stream.cltrace");
  ASSERT_EQ(t.comms.size(), 4u);
  const std::vector<std::pair<int64_t, int64_t>> want = {{10'000, 30'000}, {5'000, 9'000}, {40'000, 45'000}, {41'000, 46'000}};
  for (uint32_t r = 0; r < 4; ++r) {
    // The rows are in host order: the ops as they were called.
    EXPECT_EQ(t.comms.start[r], want[r].first) << r;
    EXPECT_EQ(t.comms.end[r], want[r].second) << r;
    EXPECT_EQ(t.comms.flags[r] & model::kCommNoGpuTiming, 0u) << r;
  }
  // No launches in the file: placed by GPU start, and none counted as unmatched.
  EXPECT_TRUE(t.launches_unrecorded);
  EXPECT_EQ(t.stats.count(ImportIssue::kUnmatchedCorrelation), 0u);
  EXPECT_EQ(model::PlacementTime(t, t.comms.activity[0]), 10'000);
  bool said = false;
  for (const std::string& n : t.notes) said |= n.find("4 ops timed by their kernels' CUPTI records") != std::string::npos;
  EXPECT_TRUE(said);
}

// Stream order where it is hard: the first two launches were recorded before the tracer
// ran (no kernels), so matching from the start would pair every launch with a later
// launch's kernel; the pairing from the end starts its kernels closer to their launches
// and is kept. A symmetric kernel (ncclSymkDevKernel_*) is NCCL's too; an all-gather
// kernel whose launch was not recorded sits among the all-reduces and is passed over.
// Then a rank killed before its last two kernels ran: the pairing from the start stays.
TEST(CuptiRecords, StreamOrderSurvivesLaunchesWithoutKernels) {
  constexpr uint64_t kStream = 0x7f0011;
  auto file = [&](bool first_missing) {
    CuptiFile f;
    f.Comm(0, 2);
    f.StreamId(kStream, 31);
    uint64_t id = 100;
    for (int k = 0; k < 6; ++k) {
      const int64_t t0 = 1'000'000 * (k + 1);
      const uint64_t group = id++, call = id++;
      f.NcclApi(nf::ApiKind::kGroupApi, group, 0, 0, t0, t0 + 800);
      f.NcclApi(nf::ApiKind::kCollApi, call, group, 0, t0 + 100, t0 + 200);
      f.Op(call, call, 0, t0 + 150);
      f.NcclApi(nf::ApiKind::kKernelLaunch, id++, group, 0, t0 + 300, t0 + 700, kStream);
      const bool recorded = first_missing ? k >= 2 : k < 4;
      if (recorded)  // each kernel 20 us after its launch, 100 us long
        f.Gpu(nf::GpuActivityKind::kKernel, k == 3 ? "ncclSymkDevKernel_AllReduce_bf16_LL" : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
              t0 + 20'000, t0 + 120'000, 1 + k, 31);
      if (k == 4) f.Gpu(nf::GpuActivityKind::kKernel, "ncclDevKernel_AllGather_RING_LL", t0 + 130'000, t0 + 140'000, 50, 31);
    }
    f.End();
    return f;
  };
  model::RankTrace late = Load(file(true).bytes(), "late_attach.cltrace");
  ASSERT_EQ(late.comms.size(), 6u);
  for (uint32_t r = 0; r < 6; ++r) {
    SCOPED_TRACE(r);
    if (r < 2) {
      EXPECT_NE(late.comms.flags[r] & model::kCommNoGpuTiming, 0u);
    } else {
      EXPECT_EQ(late.comms.start[r], 1'000'000 * (r + 1) + 20'000);
      EXPECT_EQ(late.comms.flags[r] & model::kCommNoGpuTiming, 0u);
    }
  }
  model::RankTrace killed = Load(file(false).bytes(), "killed.cltrace");
  ASSERT_EQ(killed.comms.size(), 6u);
  for (uint32_t r = 0; r < 4; ++r) EXPECT_EQ(killed.comms.start[r], 1'000'000 * (r + 1) + 20'000) << r;
  for (uint32_t r = 4; r < 6; ++r) EXPECT_NE(killed.comms.flags[r] & model::kCommNoGpuTiming, 0u) << r;
}

// The ops of one group call on a communicator that NCCL launched once (coalesced
// all-reduces, a batch_isend_irecv) are one batch: consecutive rows, flagged, spanning the
// kernel (when GPU-timed); another communicator's op that started between them stays
// apart, and a group
// launched twice on a communicator is no batch.
TEST(CuptiRecords, OpsOfOneGroupLaunchAreABatch) {
  CuptiFile f;
  f.Comm(0, 2);
  f.Comm(1, 2);
  f.NcclApi(nf::ApiKind::kGroupApi, 1, 0, 0, 1'000, 9'000);
  f.NcclApi(nf::ApiKind::kCollApi, 2, 1, 0, 1'100, 1'200);
  f.Op(20, 2, 0, 1'150);
  f.NcclApi(nf::ApiKind::kCollApi, 3, 1, 0, 3'100, 3'200);
  f.Op(21, 3, 0, 3'150);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 4, 1, 0, 8'000, 8'500);
  f.NcclApi(nf::ApiKind::kGroupApi, 5, 0, 1, 2'000, 2'900);  // comm 1's op, started between
  f.NcclApi(nf::ApiKind::kCollApi, 6, 5, 1, 2'100, 2'200);
  f.Op(22, 6, 1, 2'150);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 7, 5, 1, 2'500, 2'800);
  f.NcclApi(nf::ApiKind::kGroupApi, 8, 0, 0, 20'000, 29'000);  // launched twice
  f.NcclApi(nf::ApiKind::kCollApi, 9, 8, 0, 20'100, 20'200);
  f.Op(23, 9, 0, 20'150);
  f.NcclApi(nf::ApiKind::kCollApi, 10, 8, 0, 20'300, 20'400);
  f.Op(24, 10, 0, 20'350);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 11, 8, 0, 25'000, 25'500);
  f.NcclApi(nf::ApiKind::kKernelLaunch, 12, 8, 0, 26'000, 26'500);
  f.End();
  model::RankTrace t = Load(f.bytes(), "batches.cltrace");
  ASSERT_EQ(t.comms.size(), 5u);
  const uint8_t kBatch = model::kCommBatched, kNext = model::kCommBatchNext;
  // Rows: the batch (ops 20, 21) together at its first op's place, then comm 1's op, then
  // the two ops of the group launched twice, each alone.
  EXPECT_EQ(t.comms.flags[0] & (kBatch | kNext), kBatch);
  EXPECT_EQ(t.comms.flags[1] & (kBatch | kNext), kBatch | kNext);
  EXPECT_EQ(t.comms.start[0], 1'150);  // no GPU timing here: each keeps its host times
  EXPECT_EQ(t.comms.start[1], 3'150);
  for (uint32_t r = 2; r < 5; ++r) EXPECT_EQ(t.comms.flags[r] & kBatch, 0) << r;
  EXPECT_EQ(t.comms.start[2], 2'150);
}

TEST(CuptiRecords, TheTracersStateIsSaid) {
  CuptiFile f;
  f.Tracer(nf::TracerState::kSteppedAside, "the PyTorch profiler holds CUPTI", 0, 0);
  f.End();
  model::RankTrace t = Load(f.bytes(), "aside.cltrace");
  bool said = false;
  for (const std::string& n : t.notes) said |= n.find("stepped aside (the PyTorch profiler holds CUPTI)") != std::string::npos;
  EXPECT_TRUE(said);
  CuptiFile g = Step();
  g.Tracer(nf::TracerState::kTracing, "", 9000, 120);  // the last one counts
  g.End();
  model::RankTrace u = Load(g.bytes(), "dropped.cltrace");
  EXPECT_EQ(u.stats.count(ImportIssue::kDroppedByRecorder), 120u);
}

TEST(CuptiRecords, BadRecordsAreCountedAndTheRestLoads) {
  CuptiFile f = Step();
  f.Gpu(nf::GpuActivityKind::kKernel, "reversed", 50'000, 40'000, 0, 7);
  f.Gpu(nf::GpuActivityKind::kKernel, "far", int64_t{1} << 62, (int64_t{1} << 62) + 5, 0, 7);
  f.Api("cudaLaunchKernel", 9, 8, 99);
  f.Range("backwards", "", 10, 5);
  f.End();
  model::RankTrace t = Load(f.bytes(), "bad.cltrace");
  EXPECT_EQ(t.gpu.size(), 5u);
  EXPECT_EQ(t.host.size(), 5u);
  EXPECT_EQ(t.annotations.size(), 3u);
  EXPECT_EQ(t.stats.count(ImportIssue::kNegativeDuration), 3u);
  EXPECT_EQ(t.stats.count(ImportIssue::kBadRecord), 1u);
}

TEST(CuptiRecords, ACutFileIsReadToItsLastWholeRecord) {
  CuptiFile f = Step();
  f.End();
  const std::vector<uint8_t>& full = f.bytes();
  size_t previous = 0;
  for (size_t cut = 200; cut <= full.size(); ++cut) {
    std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(cut));
    auto t = ImportNativeTrace(Save(part, "cut.cltrace"));
    ASSERT_TRUE(t.ok()) << cut << ": " << t.status().message();
    const size_t rows = t->gpu.size() + t->host.size() + t->annotations.size();
    EXPECT_GE(rows, previous) << "cut at " << cut;
    previous = rows;
    EXPECT_LE(t->stats.count(ImportIssue::kTruncatedRecord), 1u);
  }
  EXPECT_EQ(previous, 13u);
}

}  // namespace
}  // namespace commlens::importers
