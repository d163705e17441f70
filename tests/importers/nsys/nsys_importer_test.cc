// The Nsight Systems importer on real exports (examples/traces/nsys-1gpu): what it reads
// is checked against the SQLite itself (kernel counts, NCCL ranges with payloads), and
// against the PyTorch profiler's trace of the same job. Then bad inputs: each a clear
// error naming the file, and the other ranks still load.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "analysis/analyze.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"
#include "nsys_test_util.h"

namespace commlens::importers {
namespace {

namespace fs = std::filesystem;

using nsys_test::Exec;
using nsys_test::Inflate;
using nsys_test::kSamples;
using nsys_test::QueryInt;
using nsys_test::ScratchDir;

// NCCL collective and p2p calls in the export, by name, that carry a payload.
const char* kNcclCallsSql =
    "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
    "WHERE e.domainId = (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'NCCL') "
    "AND e.binaryData IS NOT NULL AND s.value IN ('ncclAllReduce','ncclAllGather','ncclReduceScatter',"
    "'ncclBroadcast','ncclReduce','ncclAlltoAll','ncclSend','ncclRecv','ncclGather','ncclScatter')";

model::RankTrace ImportOne(const std::string& path) {
  auto r = ImportFile(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().size(), 1u);
  return std::move(r.value().front());
}

size_t Count(const model::RankTrace& r, model::ActivityKind kind) {
  return std::count(r.gpu.kind.begin(), r.gpu.kind.end(), kind);
}

class RealExport : public ::testing::TestWithParam<std::string> {};

TEST_P(RealExport, TablesMatchTheSqlite) {
  ScratchDir dir;
  const std::string gz = kSamples + GetParam() + "/rank0.sqlite.gz";
  const std::string db = Inflate(gz, dir.path, "rank0.sqlite");
  model::RankTrace r = ImportOne(gz);
  EXPECT_EQ(r.format, "nsys");
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world_size, 1);
  EXPECT_EQ(Count(r, model::ActivityKind::kKernel), QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
  EXPECT_EQ(Count(r, model::ActivityKind::kMemcpy), QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
  EXPECT_EQ(Count(r, model::ActivityKind::kMemset), QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"));
  EXPECT_EQ(static_cast<int64_t>(r.host.size()), QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  // Sync markers too, those of no stream (0xFFFFFFFF, kept as -1) among them.
  EXPECT_EQ(Count(r, model::ActivityKind::kSync),
            QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"));
  EXPECT_EQ(std::count(r.gpu.stream.begin(), r.gpu.stream.end(), -1),
            QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE streamId = 4294967295"));
  EXPECT_EQ(r.stats.total(), 0u);
  // Every NCCL call with a payload is one communication row with its size and group.
  size_t from_payload = 0;
  for (size_t i = 0; i < r.comms.size(); ++i) {
    if (r.comms.enqueue[i] == 0) continue;  // a bare-kernel row (classify), not an NVTX call
    ++from_payload;
    EXPECT_GE(r.comms.bytes[i], 0) << i;
    ASSERT_LT(r.comms.group[i], r.groups.size());
    EXPECT_NE(r.groups[r.comms.group[i]].comm_hash, 0u);
  }
  EXPECT_EQ(static_cast<int64_t>(from_payload), QueryInt(db, kNcclCallsSql));
  EXPECT_GT(from_payload, 0u);
  // Iteration ranges "step 0" .. "step 6" are the steps.
  ASSERT_EQ(r.steps.size(), 7u);
  for (size_t i = 0; i < r.steps.size(); ++i) EXPECT_EQ(r.steps[i].number, static_cast<int64_t>(i));
  // Times are Unix-epoch nanoseconds (the session start plus the export's times).
  const int64_t session = QueryInt(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
  const int64_t first = QueryInt(db, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  EXPECT_EQ(*std::min_element(r.gpu.start.begin(), r.gpu.start.end()) <= session + first, true);
  ASSERT_FALSE(r.devices.empty());
  EXPECT_NE(r.devices[0].name.find("H100"), std::string::npos);
  // Runtime names without nsys's version suffix, as Kineto and CUDA name them.
  bool launch = false;
  for (size_t i = 0; i < r.host.size(); ++i) launch |= r.strings.Get(r.host.name[i]) == "cudaLaunchKernel";
  EXPECT_TRUE(launch);
}

INSTANTIATE_TEST_SUITE_P(Workloads, RealExport, ::testing::Values("ddp", "fsdp", "moe"));

// The MoE job's grouped send/receive: each call is matched to the SendRecv kernel
// launched in its ncclGroupEnd, with NCCL's sizes.
TEST(NsysImport, MoeSendRecvMatchedToKernels) {
  model::RankTrace r = ImportOne(kSamples + "moe/rank0.sqlite.gz");
  std::map<int64_t, int> sends_by_size;
  size_t p2p = 0, matched = 0;
  std::vector<uint32_t> kernels;
  for (size_t i = 0; i < r.comms.size(); ++i) {
    const model::CommOp op = r.comms.op[i];
    if (op != model::CommOp::kSend && op != model::CommOp::kRecv) continue;
    ++p2p;
    EXPECT_EQ(r.comms.peer[i], 0);  // one rank: its own peer
    if (op == model::CommOp::kSend) ++sends_by_size[r.comms.bytes[i]];
    if (r.comms.activity[i] == model::kNoIndex) continue;
    ++matched;
    const uint32_t k = r.comms.activity[i];
    EXPECT_EQ(r.strings.Get(r.gpu.name[k]).rfind("ncclDevKernel_SendRecv", 0), 0u);
    EXPECT_EQ(r.comms.start[i], r.gpu.start[k]);
    kernels.push_back(k);
  }
  EXPECT_EQ(p2p, 280u);
  EXPECT_EQ(matched, p2p);
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  EXPECT_EQ(kernels.size(), 140u);  // one kernel per group: a send and its receive
  EXPECT_EQ(sends_by_size[16 << 20], 112);  // the tokens, 16 per step
  // The all-reduce of the dense gradients (NCCL's size: count x bf16)
  size_t allreduce = 0;
  for (size_t i = 0; i < r.comms.size(); ++i) allreduce += r.comms.op[i] == model::CommOp::kAllReduce;
  EXPECT_EQ(allreduce, 8u);
}

// Kernels, copies and sets launched within step |number| (sync markers left out: Kineto
// records them only when asked to).
size_t LaunchedInStep(const model::RankTrace& r, int64_t number) {
  for (const model::ProfilerStep& s : r.steps) {
    if (s.number != number) continue;
    size_t n = 0;
    for (size_t i = 0; i < r.gpu.size(); ++i)
      n += r.gpu.kind[i] != model::ActivityKind::kSync && r.gpu.launch[i] >= s.start && r.gpu.launch[i] < s.end;
    return n;
  }
  return 0;
}

// The PyTorch profiler's trace of the same job (steps 3-6) against the nsys export (steps
// 0-6), on one GPU and on two: the same kernels run per step, the same compute and communication time within 10%
// (the two profilers add different host overhead, which moves step spans and idle time;
// GPU work is the same). Kineto sees PyTorch's all_to_all where NCCL's ranges show the
// grouped send/receive it is made of, so collectives are compared by kernel time.
TEST(NsysImport, SamePictureAsKineto) {
  const std::string two_gpu = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/nsys-2gpu/";
  for (const std::string& w : {kSamples + "ddp", kSamples + "moe", two_gpu + "ddp", two_gpu + "moe"}) {
    const std::string parent = w.substr(0, w.rfind('/') + 1), name = w.substr(w.rfind('/') + 1);
    auto nsys = LoadTrace({w}, {});
    auto kineto = LoadTrace({parent + "kineto/" + name}, {});
    ASSERT_TRUE(nsys.ok() && kineto.ok());
    // With two ranks an NCCL kernel also waits for the other rank, and how long depends on
    // the run (each profiler delays each rank differently): communication time is compared
    // on one rank only. A launch at a step's edge may fall on either side: 1 % on two.
    const bool one_rank = nsys.value().ranks.size() == 1;
    analysis::JobAnalysis a = analysis::Analyze(nsys.value(), {});
    analysis::JobAnalysis b = analysis::Analyze(kineto.value(), {});
    std::map<int64_t, const analysis::TimeBreakdown*> by_step;
    for (const auto& s : a.steps) by_step[s.number] = &s.mean;
    ASSERT_EQ(b.steps.size(), 4u) << w;
    for (const auto& s : b.steps) {
      ASSERT_TRUE(by_step.count(s.number)) << w << " step " << s.number;
      const analysis::TimeBreakdown& n = *by_step[s.number];
      const double launched = static_cast<double>(LaunchedInStep(kineto.value().ranks[0], s.number));
      EXPECT_NEAR(static_cast<double>(LaunchedInStep(nsys.value().ranks[0], s.number)), launched,
                  one_rank ? 0.0 : 0.01 * launched)
          << w << " step " << s.number;
      EXPECT_NEAR(n.compute, s.mean.compute, 0.10 * s.mean.compute) << w << " step " << s.number;
      if (one_rank) {
        EXPECT_NEAR(n.comm, s.mean.comm, 0.10 * s.mean.comm + 1000) << w << " step " << s.number;
      }
    }
  }
}

// Two H200s, one report per rank (torchrun --no-python around nsys profile): the ranks
// come from NCCL's init payloads, every table matches its SQLite, every NCCL call with a
// payload is matched to the kernel it launched, and every collective and p2p message is
// matched across the two ranks.
class TwoGpuExport : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoGpuExport, RanksKernelsAndMatching) {
  const std::string folder = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/nsys-2gpu/" + GetParam();
  auto t = LoadTrace({folder}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const model::Trace& trace = t.value();
  ASSERT_EQ(trace.ranks.size(), 2u);
  ScratchDir dir;
  for (const model::RankTrace& r : trace.ranks) {
    EXPECT_EQ(r.world_size, 2);
    const std::string db = Inflate(r.path, dir.path, "rank" + std::to_string(r.rank) + ".sqlite");
    EXPECT_EQ(r.path, folder + "/rank" + std::to_string(r.rank) + ".sqlite.gz");
    EXPECT_EQ(Count(r, model::ActivityKind::kKernel), QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    size_t calls = 0, with_kernel = 0;
    for (size_t i = 0; i < r.comms.size(); ++i) {
      if (r.comms.enqueue[i] == 0) continue;
      ++calls;
      if (r.comms.activity[i] == model::kNoIndex) continue;
      ++with_kernel;
      EXPECT_EQ(r.strings.Get(r.gpu.name[r.comms.activity[i]]).rfind("ncclDevKernel_", 0), 0u);
    }
    EXPECT_EQ(static_cast<int64_t>(calls), QueryInt(db, kNcclCallsSql));
    EXPECT_EQ(with_kernel, calls) << "rank " << r.rank;
  }
  size_t matched = 0;
  for (size_t k = 0; k < trace.matched.size(); ++k) {
    EXPECT_EQ(trace.matched.members(k), 2u) << "matched row " << k;
    ++matched;
  }
  EXPECT_GT(matched, 10u);
}

// nsys around torchrun on two GPUs: one report holding the launcher and both ranks'
// processes. It is split into one rank per process that ran GPU work, each with the
// kernels of its own process.
TEST(NsysImport, OneReportOfTwoRanksIsSplit) {
  const std::string file = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/nsys-2gpu/wrap/ddp-job.sqlite.gz";
  auto t = LoadTrace({file}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const model::Trace& trace = t.value();
  ASSERT_EQ(trace.ranks.size(), 2u);
  EXPECT_TRUE(trace.failures.empty());
  ScratchDir dir;
  const std::string db = Inflate(file, dir.path, "job.sqlite");
  int64_t kernels = 0;
  for (const model::RankTrace& r : trace.ranks) {
    EXPECT_EQ(r.path, file);
    EXPECT_EQ(r.world_size, 2);
    bool split = false;
    for (const std::string& n : r.notes) split |= n.find("report holding 2 profiled processes") != std::string::npos;
    EXPECT_TRUE(split) << "rank " << r.rank;
    kernels += static_cast<int64_t>(Count(r, model::ActivityKind::kKernel));
    EXPECT_GT(Count(r, model::ActivityKind::kKernel), 1000u);
  }
  EXPECT_EQ(kernels, QueryInt(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
  ASSERT_GT(trace.matched.size(), 10u);
  for (size_t k = 0; k < trace.matched.size(); ++k) EXPECT_EQ(trace.matched.members(k), 2u) << k;
}

INSTANTIATE_TEST_SUITE_P(Workloads, TwoGpuExport, ::testing::Values("ddp", "fsdp", "moe"));

// GPU metrics sampling (`--gpu-metrics-devices=all --gpu-metrics-frequency=1000`, trimmed
// to steps 3-5): one counter series per metric of GPU 0, every sample kept, units from the
// metric names, clocks in MHz.
TEST(NsysImport, GpuMetricsAreCounterSeries) {
  ScratchDir dir;
  const std::string gz = kSamples + "moe-gpu-metrics/rank0.sqlite.gz";
  const std::string db = Inflate(gz, dir.path, "rank0.sqlite");
  model::RankTrace r = ImportOne(gz);
  EXPECT_EQ(static_cast<int64_t>(r.counters.size()), QueryInt(db, "SELECT count(*) FROM TARGET_INFO_GPU_METRICS"));
  size_t samples = 0;
  for (const model::CounterSeries& s : r.counters) {
    EXPECT_EQ(s.owner, model::CounterOwner::kDevice);
    EXPECT_EQ(s.device, "0");
    EXPECT_EQ(s.time.size(), s.value.size());
    EXPECT_TRUE(std::is_sorted(s.time.begin(), s.time.end())) << s.name;
    samples += s.time.size();
    if (s.name == "gpu.SMs Active") {
      EXPECT_EQ(s.unit, "%");
      EXPECT_GT(*std::max_element(s.value.begin(), s.value.end()), 10.0);  // the steps kept the SMs busy
      EXPECT_LE(*std::max_element(s.value.begin(), s.value.end()), 100.0);
    }
    if (s.name == "gpu.GPC Clock Frequency") {
      EXPECT_EQ(s.unit, "MHz");
      EXPECT_GT(s.value.front(), 100.0);
      EXPECT_LT(s.value.front(), 3000.0);
    }
  }
  EXPECT_EQ(static_cast<int64_t>(samples), QueryInt(db, "SELECT count(*) FROM GPU_METRICS"));
}

// Two ranks of one job, each with its own report: the MoE export as rank 0, and a copy
// whose NCCL init payloads say "rank 1 of 2" as rank 1 (the init payload's rank count and
// rank sit at bytes 8 and 12 of its data). The loader keeps both ranks, the communicators
// become job groups of two, and every collective and p2p message is matched across the
// ranks by (group, sequence number).
void SetInitPayload(const std::string& db_path, int32_t nranks, int32_t rank) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  const char* select =
      "SELECT e.rowid, e.binaryData FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
      "WHERE s.value LIKE 'ncclCommInit%' AND e.binaryData IS NOT NULL";
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, select, -1, &s, nullptr), SQLITE_OK);
  std::vector<std::pair<int64_t, std::string>> rows;
  while (sqlite3_step(s) == SQLITE_ROW)
    rows.push_back({sqlite3_column_int64(s, 0),
                    std::string(static_cast<const char*>(sqlite3_column_blob(s, 1)), sqlite3_column_bytes(s, 1))});
  sqlite3_finalize(s);
  ASSERT_FALSE(rows.empty());
  for (auto& [rowid, blob] : rows) {
    uint64_t offset = 0;
    ASSERT_GE(blob.size(), 32u);
    std::memcpy(&offset, blob.data() + 24, 8);  // the first payload's offset
    ASSERT_LE(offset + 16, blob.size());
    std::memcpy(blob.data() + offset + 8, &nranks, 4);
    std::memcpy(blob.data() + offset + 12, &rank, 4);
    sqlite3_stmt* u = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE NVTX_EVENTS SET binaryData = ?1 WHERE rowid = ?2", -1, &u, nullptr), SQLITE_OK);
    sqlite3_bind_blob(u, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(u, 2, rowid);
    ASSERT_EQ(sqlite3_step(u), SQLITE_DONE);
    sqlite3_finalize(u);
  }
  sqlite3_close(db);
}

TEST(NsysImport, TwoRanksOfOneJob) {
  ScratchDir dir;
  const std::string a = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "a.sqlite");
  const std::string b = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "b.sqlite");
  SetInitPayload(a, 2, 0);
  SetInitPayload(b, 2, 1);
  auto t = LoadTrace({dir.path.string()}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const model::Trace& trace = t.value();
  ASSERT_EQ(trace.ranks.size(), 2u);
  EXPECT_EQ(trace.ranks[0].rank, 0);
  EXPECT_EQ(trace.ranks[1].rank, 1);
  EXPECT_EQ(trace.ranks[1].world_size, 2);
  EXPECT_EQ(trace.ranks[1].path, b);
  // Split communicators (no init payload) are sized by their users: both ranks.
  for (const model::JobGroup& g : trace.groups) EXPECT_EQ(g.size, 2) << g.name;
  // Collectives: the k-th of each group on both ranks. (The copy's p2p messages still
  // name peer 0, the one-rank job's own rank, so they pair up differently.)
  size_t matched = 0, collectives = 0;
  for (size_t k = 0; k < trace.matched.size(); ++k) {
    if (trace.matched.kind[k] != model::MatchKind::kCollective) continue;
    EXPECT_EQ(trace.matched.members(k), 2u) << k;
    ++matched;
  }
  for (size_t i = 0; i < trace.ranks[0].comms.size(); ++i)
    collectives += trace.ranks[0].comms.enqueue[i] != 0 && !model::IsPointToPoint(trace.ranks[0].comms.op[i]);
  EXPECT_EQ(matched, collectives);
  // The all-to-all's send size is now n x NCCL's per-peer size.
  for (size_t i = 0; i < trace.ranks[0].comms.size(); ++i)
    if (trace.ranks[0].comms.op[i] == model::CommOp::kAllToAll) {
      EXPECT_EQ(trace.ranks[0].comms.bytes[i] % 2, 0);
    }
}

// An export whose NCCL ranges carry no payload takes its rank from the launcher variables
// of the profiled environment (torchrun's RANK=0 in this report) and says so.
TEST(NsysImport, RankFromTheProfiledEnvironment) {
  ScratchDir dir;
  const std::string db = Inflate(kSamples + "ddp/rank0.sqlite.gz", dir.path, "job.sqlite");
  Exec(db, "UPDATE NVTX_EVENTS SET binaryData = NULL;");
  auto r = ImportFile(db);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().size(), 1u);
  EXPECT_EQ(r.value()[0].rank, 0);
  bool told = false;
  for (const std::string& n : r.value()[0].notes) told |= n.find("from RANK (torchrun)") != std::string::npos;
  EXPECT_TRUE(told);
}

// nsys around torchrun: a report holding the launcher and the rank's process, exported
// without payloads. The rank's process is the one rank; the report says what is missing.
TEST(NsysImport, WrappedLauncherWithoutPayloads) {
  auto r = ImportFile(kSamples + "wrap/nsys-ddp-1gpu.sqlite.gz");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().size(), 1u);
  const model::RankTrace& rank = r.value().front();
  bool told = false;
  for (const std::string& n : rank.notes) told |= n.find("--include-blobs=true") != std::string::npos;
  EXPECT_TRUE(told);
  EXPECT_GT(Count(rank, model::ActivityKind::kKernel), 1000u);
}

// Bad inputs: each a clear message naming the file.
class BadExport : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::string Real() { return Inflate(kSamples + "ddp/rank0.sqlite.gz", dir.path, "real.sqlite"); }
  std::string Import(const std::string& path) {
    auto r = ImportFile(path);
    EXPECT_FALSE(r.ok()) << path;
    return r.ok() ? std::string() : r.status().message();
  }
};

TEST_F(BadExport, SqliteThatIsNotAnExport) {
  const std::string path = (dir.path / "other.sqlite").string();
  Exec(path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  const std::string msg = Import(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an Nsight Systems export"), std::string::npos) << msg;
}

TEST_F(BadExport, UnknownSchemaMajorVersion) {
  const std::string path = Real();
  Exec(path, "UPDATE META_DATA_EXPORT SET value = '4' WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR';"
             "UPDATE META_DATA_EXPORT SET value = '4.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION';");
  const std::string msg = Import(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("schema version 4.1.0"), std::string::npos) << msg;
}

TEST_F(BadExport, TruncatedDatabase) {
  const std::string path = Real();
  fs::resize_file(path, fs::file_size(path) / 3);
  const std::string msg = Import(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST_F(BadExport, LockedDatabase) {
  const std::string path = Real();
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const std::string msg = Import(path);
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("locked"), std::string::npos) << msg;
}

// A folder with one good export and one damaged one: the good rank loads, the bad file
// is a failure with its message.
TEST_F(BadExport, OtherRanksStillLoad) {
  const std::string good = Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "rank0.sqlite");
  const std::string bad = (dir.path / "rank1.sqlite").string();
  Exec(bad, "CREATE TABLE META_DATA_EXPORT(name, value); INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION_MAJOR', '2');");
  auto t = LoadTrace({dir.path.string()}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t.value().ranks.size(), 1u);
  EXPECT_EQ(t.value().ranks[0].path, good);
  ASSERT_EQ(t.value().failures.size(), 1u);
  EXPECT_EQ(t.value().failures[0].path, bad);
}

}  // namespace
}  // namespace commlens::importers
