// The native importer on files built record by record: what each field becomes in the
// trace model, how GPU times are put on the host clock, and how damaged files are read.
#include "importers/native/native_importer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "passes/finish.h"
#include "native_format/format.h"
#include "native_format/record_writer.h"

namespace commlens::importers {
namespace {

namespace nf = native_format;
using model::CommOp;
using model::ImportIssue;

// Builds a native trace the way the plugin lays one out.
class TraceBuilder {
 public:
  explicit TraceBuilder(int rank = 0, int world = 8) {
    w_.AppendFileHeader();
    nf::ProcessRecord p{};
    p.pid = 1;
    p.global_rank = rank;
    p.world_size = world;
    p.hostname = Str("node7");
    p.plugin_version = Str("commlens test");
    p.abi_version = 5;
    w_.Append(nf::RecordType::kProcess, p);
  }
  uint32_t Str(const std::string& s) {
    w_.AppendString(next_string_, s);
    return next_string_++;
  }
  void Comm(uint32_t index, uint64_t hash, const std::string& name, int rank, int nranks) {
    nf::CommRecord c{};
    c.comm = index;
    c.comm_hash = hash;
    c.name = name.empty() ? 0 : Str(name);
    c.rank = rank;
    c.nranks = nranks;
    c.nnodes = 1;
    w_.Append(nf::RecordType::kComm, c);
  }
  // An op; returns its id.
  uint64_t Op(uint32_t comm, const std::string& func, const std::string& dtype, uint64_t count,
              int root_or_peer = -1, nf::OpKind kind = nf::OpKind::kColl, uint8_t flags = 0) {
    nf::OpRecord o{};
    o.op_id = ++last_op_;
    o.comm = comm;
    o.func = Str(func);
    o.dtype = Str(dtype);
    o.algo = Str("RING");
    o.proto = Str("SIMPLE");
    o.count = count;
    o.kind = static_cast<uint8_t>(kind);
    o.flags = flags;
    o.root_or_peer = root_or_peer;
    o.channels = 2;
    o.nccl_seq = kind == nf::OpKind::kP2p ? nf::kNoSeq : last_op_ + 100;
    o.comm_seq = last_op_ - 1;
    o.host_start_ns = 1'000'000 * static_cast<int64_t>(last_op_);
    o.host_stop_ns = o.host_start_ns + 500;
    w_.Append(nf::RecordType::kOp, o);
    return o.op_id;
  }
  void Timing(uint64_t op, uint64_t start, uint64_t stop, int64_t offset_upper) {
    nf::KernelTimingRecord k{};
    k.op_id = op;
    k.gpu_start = start;
    k.gpu_stop = stop;
    k.clock_offset_upper = offset_upper;
    k.channels = 2;
    w_.Append(nf::RecordType::kKernelTiming, k);
  }
  // Phase |phase| (0: the initial sync) of |channels| channels, |each| ns each (format 1.5).
  void Phases(uint64_t op, uint32_t channels, uint64_t each, uint32_t flags = 0, int phase = 0) {
    nf::KernelPhaseRecord k{};
    k.op_id = op;
    k.first_start[phase] = 1'000;
    k.last_stop[phase] = 1'000 + each;
    k.total_ns[phase] = each * channels;
    k.channels[phase] = channels;
    k.flags = flags;
    w_.Append(nf::RecordType::kKernelPhase, k);
  }
  void Stats(uint32_t comm, uint64_t dropped, uint64_t seq_gaps) {
    nf::StatsRecord s{};
    s.comm = comm;
    s.dropped[static_cast<int>(nf::EventKind::kColl)] = dropped;
    s.seq_gaps = seq_gaps;
    w_.Append(nf::RecordType::kStats, s);
  }
  void End() {
    nf::EndRecord e{};
    w_.Append(nf::RecordType::kEnd, e);
  }
  nf::RecordWriter& writer() { return w_; }
  const std::vector<uint8_t>& bytes() const { return w_.bytes(); }

 private:
  nf::RecordWriter w_;
  uint32_t next_string_ = 1;
  uint64_t last_op_ = 0;
};

std::string Save(const std::vector<uint8_t>& bytes, const std::string& name) {
  auto dir = std::filesystem::path(COMMLENS_BINARY_DIR) / "test-output" / "native_importer";
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

model::RankTrace Import(const std::vector<uint8_t>& bytes, const std::string& name) {
  auto t = ImportNativeTrace(Save(bytes, name));
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : model::RankTrace{};
}

TEST(NativeImporterTest, SizesFollowNcclTests) {
  TraceBuilder b(/*rank=*/3, /*world=*/8);
  b.Comm(0, 0xAB, "world", 3, 8);
  b.Op(0, "AllReduce", "ncclFloat32", 100);
  b.Op(0, "AllGather", "ncclBfloat16", 100);
  b.Op(0, "ReduceScatter", "ncclFloat16", 100);
  b.Op(0, "AlltoAll", "ncclInt64", 100);
  b.Op(0, "Broadcast", "ncclInt8", 100, /*root=*/5);
  b.Op(0, "Reduce", "ncclFloat64", 100, /*root=*/6);
  b.Op(0, "Send", "ncclUint8", 100, /*peer=*/1, nf::OpKind::kP2p, nf::kOpFlagSend);
  b.Op(0, "Recv", "ncclInt32", 100, /*peer=*/2, nf::OpKind::kP2p, 0);
  b.End();
  model::RankTrace t = Import(b.bytes(), "sizes.cltrace");
  ASSERT_EQ(t.comms.size(), 8u);
  struct Want {
    CommOp op;
    int64_t in, out, bytes;
    int32_t peer;
  };
  const Want want[] = {
      {CommOp::kAllReduce, 100, 100, 400, -1},     {CommOp::kAllGather, 100, 800, 1600, -1},
      {CommOp::kReduceScatter, 800, 100, 1600, -1}, {CommOp::kAllToAll, 800, 800, 6400, -1},
      {CommOp::kBroadcast, 100, 100, 100, 5},      {CommOp::kReduce, 100, 100, 800, 6},
      {CommOp::kSend, 100, 0, 100, 1},             {CommOp::kRecv, 0, 100, 400, 2},
  };
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t.comms.op[i], want[i].op);
    EXPECT_EQ(t.comms.in_elems[i], want[i].in);
    EXPECT_EQ(t.comms.out_elems[i], want[i].out);
    EXPECT_EQ(t.comms.bytes[i], want[i].bytes);
    EXPECT_EQ(t.comms.peer[i], want[i].peer);
    EXPECT_EQ(t.comms.seq[i], static_cast<int64_t>(i));  // p2p too: the k-th message between the two
    EXPECT_EQ(t.strings.Get(t.comms.algorithm[i]), "RING");
    EXPECT_EQ(t.comms.channels[i], 2);
  }
  // p2p: direction is the op, the other end is the peer (comm ranks).
  EXPECT_EQ(t.groups[t.comms.group[6]].self, 3);
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.hostname, "node7");
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].ranks.size(), 8u);
  EXPECT_EQ(t.stats.total(), 0u);
}

TEST(NativeImporterTest, SendAndItsReceiveShareAKeyAcrossRanks) {
  TraceBuilder sender(/*rank=*/0, /*world=*/2);
  sender.Comm(0, 0x77, "pp", 0, 2);
  sender.Op(0, "AllReduce", "ncclFloat32", 1);
  sender.Op(0, "Send", "ncclFloat32", 64, /*peer=*/1, nf::OpKind::kP2p, nf::kOpFlagSend);
  TraceBuilder receiver(/*rank=*/1, /*world=*/2);
  receiver.Comm(0, 0x77, "pp", 1, 2);
  receiver.Op(0, "AllReduce", "ncclFloat32", 1);
  receiver.Op(0, "Recv", "ncclFloat32", 64, /*peer=*/0, nf::OpKind::kP2p, 0);
  model::Trace job;
  job.ranks.push_back(Import(sender.bytes(), "p2p0.cltrace"));
  job.ranks.push_back(Import(receiver.bytes(), "p2p1.cltrace"));
  ASSERT_EQ(job.ranks[0].comms.size(), 2u);
  ASSERT_EQ(job.ranks[1].comms.size(), 2u);
  passes::FinishJob(&job);
  const model::MatchedOps& m = job.matched;
  ASSERT_EQ(m.size(), 2u);  // the all-reduce and the message, each on both ranks
  EXPECT_EQ(m.kind[0], model::MatchKind::kCollective);
  EXPECT_EQ(m.members(0), 2u);
  EXPECT_EQ(m.kind[1], model::MatchKind::kP2p);
  EXPECT_EQ(m.sender[1], 0);
  EXPECT_EQ(m.receiver[1], 1);
  ASSERT_EQ(m.members(1), 2u);
  EXPECT_EQ(job.ranks[m.rank_index[m.first[1]]].comms.op[m.row[m.first[1]]], CommOp::kSend);
  EXPECT_EQ(job.ranks[m.rank_index[m.first[1] + 1]].comms.op[m.row[m.first[1] + 1]], CommOp::kRecv);
}

TEST(NativeImporterTest, GpuTimesUseTheSmallestOffsetBoundNearby) {
  TraceBuilder b;
  b.Comm(0, 1, "", 0, 2);
  constexpr uint64_t k100s = 100'000'000'000;
  uint64_t a = b.Op(0, "AllReduce", "ncclFloat32", 1);
  uint64_t c = b.Op(0, "AllReduce", "ncclFloat32", 1);
  uint64_t d = b.Op(0, "AllReduce", "ncclFloat32", 1);
  uint64_t e = b.Op(0, "AllReduce", "ncclFloat32", 1);
  b.Timing(a, 1'000, 3'000, 5'000);       // bucket 0: bounds 5000 and 4000
  b.Timing(c, 2'000, 9'000, 4'000);
  b.Timing(d, k100s, k100s + 700, 9'000);  // bucket 10: the GPU clock drifted
  b.Timing(e, 3 * k100s, 3 * k100s + 10, 8'000);  // bucket 30
  b.End();
  model::RankTrace t = Import(b.bytes(), "clock.cltrace");
  ASSERT_EQ(t.comms.size(), 4u);
  EXPECT_EQ(t.comms.start[0], 1'000 + 4'000);
  EXPECT_EQ(t.comms.end[0], 3'000 + 4'000);
  EXPECT_EQ(t.comms.start[1], 2'000 + 4'000);
  EXPECT_EQ(t.comms.start[2], static_cast<int64_t>(k100s) + 9'000);
  EXPECT_EQ(t.comms.end[2] - t.comms.start[2], 700);
  EXPECT_EQ(t.comms.start[3], static_cast<int64_t>(3 * k100s) + 8'000);
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) {
    return n.find("offset 4000 ns (from 4 samples; 5000 ns spread") != std::string::npos;
  }));
}

// NCCL 2.31's kernel phases: an op's initial sync is its channels' mean, merged over the
// op's records (two flushes); an op without them has none; one whose channels report a
// compute phase but no initial sync waited none (NCCL leaves out a phase of no length);
// a channel that stopped before it started was left out by the writer (counted, the rest
// kept); a phase of absurd length is a bad record and no wait.
TEST(NativeImporterTest, KernelPhasesGiveEachOpItsInitialSync) {
  TraceBuilder b;
  b.Comm(0, 1, "", 0, 2);
  std::vector<uint64_t> ops;
  for (int i = 0; i < 5; ++i) ops.push_back(b.Op(0, "AllReduce", "ncclFloat32", 1));
  for (uint64_t op : ops) b.Timing(op, 1'000, 90'000, 0);
  b.Phases(ops[0], 2, 30'000);
  b.Phases(ops[0], 2, 10'000);  // its other channels, in a later flush
  b.Phases(ops[2], 3, 5'000, nf::kTimingFlagBadTimer);
  b.Phases(ops[3], 1, UINT64_MAX / 2);
  b.Phases(ops[4], 2, 40'000, 0, /*phase=*/1);  // the compute alone: the last to arrive
  b.End();
  model::RankTrace t = Import(b.bytes(), "phases.cltrace");
  ASSERT_EQ(t.comms.size(), 5u);
  EXPECT_EQ(t.comms.initial_sync[0], 20'000);
  EXPECT_EQ(t.comms.initial_sync[1], model::kNoTime);
  EXPECT_EQ(t.comms.initial_sync[2], 5'000);
  EXPECT_EQ(t.comms.initial_sync[3], model::kNoTime);
  EXPECT_EQ(t.comms.initial_sync[4], 0);
  EXPECT_EQ(t.stats.count(ImportIssue::kBadRecord), 2u);
}

TEST(NativeImporterTest, OpsWithoutKernelTimingKeepHostTimes) {
  TraceBuilder b;
  b.Comm(0, 1, "x", 0, 2);
  b.Op(0, "Broadcast", "ncclFloat32", 10, 0);
  b.End();
  model::RankTrace t = Import(b.bytes(), "untimed.cltrace");
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms.start[0], 1'000'000);
  EXPECT_EQ(t.comms.end[0], 1'000'500);
  EXPECT_EQ(t.comms.enqueue[0], 1'000'000);
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(),
                          [](const std::string& n) { return n.find("1 ops have no kernel timing") == 0; }));
}

TEST(NativeImporterTest, SequenceFallsBackToNcclsAfterTheRecorderWasOff) {
  TraceBuilder b;
  b.Comm(0, 1, "x", 0, 2);
  b.Op(0, "AllGather", "ncclFloat32", 10);  // nccl_seq 101
  b.Stats(0, /*dropped=*/7, /*seq_gaps=*/1);
  b.End();
  model::RankTrace t = Import(b.bytes(), "gaps.cltrace");
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms.seq[0], 101 * 16 + static_cast<int>(CommOp::kAllGather));
  EXPECT_EQ(t.stats.count(ImportIssue::kDroppedByRecorder), 7u);
}

TEST(NativeImporterTest, RankComesFromTheLargestCommunicatorWithoutALauncherRank) {
  TraceBuilder b(/*rank=*/-1, /*world=*/0);
  b.Comm(0, 1, "pair", 1, 2);
  b.Comm(1, 2, "world", 5, 16);
  b.End();
  model::RankTrace t = Import(b.bytes(), "rank.cltrace");
  EXPECT_EQ(t.rank, 5);
  EXPECT_EQ(t.world_size, 16);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_TRUE(t.groups[0].ranks.empty());  // "pair": members unknown
  EXPECT_EQ(t.groups[1].ranks.size(), 16u);
}

// The LaunchTimer record grew in 1.9 (what timing cost the launching threads): a 1.7 or
// 1.8 file's 32-byte record still reads, its counters kept, with no cost said; a 1.9 one
// gives the mean cost per launch.
TEST(NativeImporterTest, LaunchTimerRecordsOfEveryVersionRead) {
  for (const bool old : {true, false}) {
    SCOPED_TRACE(old ? "1.7" : "1.9");
    TraceBuilder b;
    b.Comm(0, 1, "x", 0, 2);
    b.Op(0, "AllReduce", "ncclFloat32", 1);
    nf::LaunchTimerRecord l{};
    l.time_ns = 2'000'000'000;
    l.state = static_cast<uint32_t>(nf::LaunchTimerState::kTiming);
    l.timed = 4;
    l.untimed = 3;
    l.host_ns = 4 * 6'500;
    l.host_launches = 4;
    b.writer().Append(nf::RecordType::kLaunchTimer, &l, old ? nf::kLaunchTimerRecordSize17 : static_cast<uint32_t>(sizeof(l)));
    b.End();
    model::RankTrace t = Import(b.bytes(), old ? "timer17.cltrace" : "timer19.cltrace");
    EXPECT_EQ(t.stats.total(), 0u);  // no record refused
    auto has = [&](const std::string& part) {
      return std::any_of(t.notes.begin(), t.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has("3 of NCCL's kernel launches were not timed by CUDA events"));
    EXPECT_EQ(has("6.5 us a launch (the mean over 4 launches)"), !old);
  }
}

TEST(NativeImporterTest, UnknownRecordTypesAreSkipped) {
  TraceBuilder b;
  b.Comm(0, 1, "x", 0, 2);
  uint64_t future = 42;
  b.writer().Append(static_cast<nf::RecordType>(77), future);
  b.Op(0, "AllReduce", "ncclFloat32", 1);
  b.End();
  model::RankTrace t = Import(b.bytes(), "future.cltrace");
  EXPECT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.stats.total(), 0u);
}

std::vector<uint8_t> SampleFile() {
  TraceBuilder b;
  b.Comm(0, 1, "x", 0, 2);
  for (int i = 0; i < 5; ++i) b.Timing(b.Op(0, "AllReduce", "ncclFloat32", 1), 10, 20, 0);
  b.Stats(0, 0, 0);
  b.End();
  return b.bytes();
}

TEST(NativeImporterTest, EveryTruncationReadsWhatCameBefore) {
  const std::vector<uint8_t> full = SampleFile();
  size_t previous_ops = 0;
  bool saw_truncation = false;
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(cut));
    auto t = ImportNativeTrace(Save(part, "cut.cltrace"));
    if (!t.ok()) {
      EXPECT_LT(cut, 200u) << "only a file without its process record may fail: " << t.status().message();
      continue;
    }
    EXPECT_GE(t->comms.size(), previous_ops) << "cut at " << cut;
    previous_ops = t->comms.size();
    saw_truncation |= t->stats.count(ImportIssue::kTruncatedRecord) == 1;
    EXPECT_LE(t->stats.count(ImportIssue::kTruncatedRecord), 1u);
  }
  EXPECT_EQ(previous_ops, 5u);
  EXPECT_TRUE(saw_truncation);
}

TEST(NativeImporterTest, RandomDamageNeverCrashesTheReader) {
  const std::vector<uint8_t> full = SampleFile();
  std::mt19937 rng(12345);
  for (int round = 0; round < 800; ++round) {
    std::vector<uint8_t> bytes = full;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t at = sizeof(nf::FileHeader) + rng() % (bytes.size() - sizeof(nf::FileHeader));
      bytes[at] = static_cast<uint8_t>(rng());
    }
    if (round % 7 == 0) bytes.resize(sizeof(nf::FileHeader) + rng() % (bytes.size() - sizeof(nf::FileHeader)));
    auto t = ImportNativeTrace(Save(bytes, "fuzz.cltrace"));
    if (t.ok()) {
      EXPECT_LE(t->comms.size(), 5u);
    }
  }
}

TEST(NativeImporterTest, SniffsAndReportsUnreadableFiles) {
  std::vector<uint8_t> full = SampleFile();
  EXPECT_TRUE(LooksLikeNativeTrace(std::string_view(reinterpret_cast<const char*>(full.data()), 8)));
  EXPECT_FALSE(LooksLikeNativeTrace("{\"traceEvents\": []}"));
  EXPECT_FALSE(LooksLikeNativeTrace("\x89" "CL"));
  auto missing = ImportNativeTrace("/nonexistent/rank0.cltrace");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/rank0.cltrace"), std::string::npos);
  auto header_only = ImportNativeTrace(Save(std::vector<uint8_t>(full.begin(), full.begin() + 32), "h.cltrace"));
  ASSERT_FALSE(header_only.ok());
  EXPECT_NE(header_only.status().message().find("no process record"), std::string::npos);
}

}  // namespace
}  // namespace commlens::importers
