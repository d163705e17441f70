// The rank trace codec (model/rank_trace_codec.h) on the shipped samples: every column,
// string, group, step, counter, stat and note survives a round trip; a job assembled from
// decoded ranks reports exactly what the single-process load reports; damaged buffers
// fail cleanly.
#include "model/rank_trace_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"
#include "model/host_events.h"
#include "report/json_report.h"

namespace commlens::model {
namespace {

// Kineto (DDP, MoE), native recordings, and Nsight exports (one with GPU metrics, whose
// counters are doubles).
const char* const kSamples[] = {"ddp", "moe", "native", "nsys-1gpu/moe", "nsys-1gpu/moe-gpu-metrics"};

std::vector<std::string> SampleFiles(const std::string& sample) {
  auto files = importers::ExpandInputs({std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/" + sample});
  EXPECT_TRUE(files.ok()) << files.status().message();
  return files.ok() ? *files : std::vector<std::string>{};
}

// Byte equality: doubles compared bit for bit (a NaN equals itself).
template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

void ExpectSameRank(const RankTrace& a, const RankTrace& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.nccl_version, b.nccl_version);
  EXPECT_EQ(a.hostname, b.hostname);
  EXPECT_EQ(a.input_bytes, b.input_bytes);
  EXPECT_EQ(a.host_counters_only, b.host_counters_only);
  EXPECT_EQ(a.part, b.part);
  EXPECT_EQ(a.host_events_dropped, b.host_events_dropped);
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].id, b.devices[i].id);
    EXPECT_EQ(a.devices[i].name, b.devices[i].name);
    EXPECT_EQ(a.devices[i].sm_count, b.devices[i].sm_count);
    EXPECT_EQ(a.devices[i].memory_bytes, b.devices[i].memory_bytes);
  }
  ASSERT_EQ(a.threads.size(), b.threads.size());
  for (size_t i = 0; i < a.threads.size(); ++i) {
    EXPECT_EQ(a.threads[i].pid, b.threads[i].pid);
    EXPECT_EQ(a.threads[i].tid, b.threads[i].tid);
    EXPECT_EQ(a.threads[i].name, b.threads[i].name);
  }
  // Every id keeps its string.
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (uint32_t i = 0; i < a.strings.size(); ++i) EXPECT_EQ(a.strings.Get({i}), b.strings.Get({i})) << i;

#define EXPECT_COLUMN(table, column) EXPECT_TRUE(SameBytes(a.table.column, b.table.column)) << #table "." #column
  EXPECT_COLUMN(gpu, start);
  EXPECT_COLUMN(gpu, end);
  EXPECT_COLUMN(gpu, name);
  EXPECT_COLUMN(gpu, device);
  EXPECT_COLUMN(gpu, stream);
  EXPECT_COLUMN(gpu, correlation);
  EXPECT_COLUMN(gpu, kind);
  EXPECT_COLUMN(gpu, cls);
  EXPECT_COLUMN(gpu, copy);
  EXPECT_COLUMN(gpu, bytes);
  EXPECT_COLUMN(gpu, comm);
  EXPECT_COLUMN(gpu, launch);
  EXPECT_COLUMN(host, start);
  EXPECT_COLUMN(host, end);
  EXPECT_COLUMN(host, name);
  EXPECT_COLUMN(host, pid);
  EXPECT_COLUMN(host, tid);
  EXPECT_COLUMN(host, correlation);
  EXPECT_COLUMN(host, kind);
  EXPECT_COLUMN(annotations, start);
  EXPECT_COLUMN(annotations, end);
  EXPECT_COLUMN(annotations, name);
  EXPECT_COLUMN(annotations, domain);
  EXPECT_COLUMN(annotations, pid);
  EXPECT_COLUMN(annotations, tid);
  EXPECT_COLUMN(annotations, device);
  EXPECT_COLUMN(annotations, depth);
  EXPECT_COLUMN(flows, id);
  EXPECT_COLUMN(flows, category);
  EXPECT_COLUMN(flows, phase);
  EXPECT_COLUMN(flows, time);
  EXPECT_COLUMN(flows, pid);
  EXPECT_COLUMN(flows, tid);
  EXPECT_COLUMN(comms, start);
  EXPECT_COLUMN(comms, end);
  EXPECT_COLUMN(comms, op);
  EXPECT_COLUMN(comms, dtype);
  EXPECT_COLUMN(comms, in_elems);
  EXPECT_COLUMN(comms, out_elems);
  EXPECT_COLUMN(comms, bytes);
  EXPECT_COLUMN(comms, group);
  EXPECT_COLUMN(comms, seq);
  EXPECT_COLUMN(comms, peer);
  EXPECT_COLUMN(comms, activity);
  EXPECT_COLUMN(comms, algorithm);
  EXPECT_COLUMN(comms, protocol);
  EXPECT_COLUMN(comms, channels);
  EXPECT_COLUMN(comms, enqueue);
  EXPECT_COLUMN(comms, flags);
#undef EXPECT_COLUMN

  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const ProcessGroup &x = a.groups[i], &y = b.groups[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.ranks, y.ranks);
    EXPECT_EQ(x.size, y.size);
    EXPECT_EQ(x.comm_hash, y.comm_hash);
    EXPECT_EQ(x.self, y.self);
    EXPECT_EQ(x.job_group, y.job_group);
  }
  EXPECT_TRUE(SameBytes(a.steps, b.steps));
  ASSERT_EQ(a.counters.size(), b.counters.size());
  for (size_t i = 0; i < a.counters.size(); ++i) {
    const CounterSeries &x = a.counters[i], &y = b.counters[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_EQ(x.owner, y.owner);
    EXPECT_EQ(x.host, y.host);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.cumulative, y.cumulative);
    EXPECT_EQ(x.width_bits, y.width_bits);
    EXPECT_EQ(x.saturates, y.saturates);
    EXPECT_TRUE(SameBytes(x.time, y.time)) << x.name;
    EXPECT_TRUE(SameBytes(x.value, y.value)) << x.name;
  }
  for (size_t i = 0; i < static_cast<size_t>(ImportIssue::kCount); ++i) {
    auto issue = static_cast<ImportIssue>(i);
    EXPECT_EQ(a.stats.count(issue), b.stats.count(issue)) << IssueName(issue);
    ASSERT_EQ(a.stats.examples(issue).size(), b.stats.examples(issue).size()) << IssueName(issue);
    for (size_t k = 0; k < a.stats.examples(issue).size(); ++k) {
      EXPECT_EQ(a.stats.examples(issue)[k].offset, b.stats.examples(issue)[k].offset);
      EXPECT_EQ(a.stats.examples(issue)[k].what, b.stats.examples(issue)[k].what);
    }
  }
}

RankTrace RoundTrip(const RankTrace& r) {
  std::vector<uint8_t> bytes;
  EncodeRankTrace(r, &bytes);
  Result<RankTrace> back = DecodeRankTrace(bytes);
  EXPECT_TRUE(back.ok()) << back.status().message();
  return back.ok() ? std::move(back).value() : RankTrace{};
}

TEST(RankTraceCodec, SamplesSurviveARoundTrip) {
  // What the samples hold together, so that every part is compared with something in it.
  size_t gpu = 0, host = 0, annotations = 0, flows = 0, comms = 0, groups = 0, steps = 0, counters = 0,
         devices = 0, threads = 0, notes = 0, issues = 0;
  for (const char* sample : kSamples) {
    SCOPED_TRACE(sample);
    for (const std::string& file : SampleFiles(sample)) {
      SCOPED_TRACE(file);
      auto ranks = importers::ImportFile(file);  // what a worker process sends
      ASSERT_TRUE(ranks.ok()) << ranks.status().message();
      for (const RankTrace& r : *ranks) {
        ExpectSameRank(r, RoundTrip(r));
        gpu += r.gpu.size(), host += r.host.size(), annotations += r.annotations.size();
        flows += r.flows.size(), comms += r.comms.size(), groups += r.groups.size();
        steps += r.steps.size(), counters += r.counters.size(), devices += r.devices.size();
        threads += r.threads.size(), notes += r.notes.size(), issues += r.stats.total();
      }
    }
  }
  for (size_t n : {gpu, host, annotations, flows, comms, groups, steps, counters, devices, threads, notes})
    EXPECT_GT(n, 0u);
  (void)issues;  // the samples are clean: KeepsImportIssues covers the statistics
}

TEST(RankTraceCodec, KeepsImportIssuesAndEveryIdAndFlag) {
  auto ranks = importers::ImportFile(SampleFiles("ddp").front());
  ASSERT_TRUE(ranks.ok());
  RankTrace r = std::move(ranks->front());
  for (int i = 0; i < 5; ++i) r.stats.Count(ImportIssue::kMalformedEvent, 100 + i, "event " + std::to_string(i));
  r.stats.Count(ImportIssue::kDroppedByRecorder, 0, "", 12345);
  r.notes.push_back("no rank in the trace: rank 0 taken from the file name");
  CounterSeries nic;
  nic.name = "port_xmit_data";
  nic.unit = "4 bytes";
  nic.owner = CounterOwner::kNic;
  nic.host = "node7";
  nic.device = "mlx5_0:1";
  nic.cumulative = true;
  nic.width_bits = 32;
  nic.saturates = true;
  nic.time = {1, 2};
  nic.value = {0.5, -0.0};
  r.counters.push_back(nic);
  r.host_counters_only = true;
  r.strings.Intern(std::string(1 << 19, 'x'));  // a string in a block of its own
  RankTrace back = RoundTrip(r);
  ExpectSameRank(r, back);
  EXPECT_EQ(back.stats.count(ImportIssue::kMalformedEvent), 5u);
  EXPECT_EQ(back.stats.examples(ImportIssue::kMalformedEvent).size(), ImportStats::kExamplesPerIssue);
  EXPECT_EQ(back.stats.total(), 5u + 12345u);
  EXPECT_TRUE(back.host_counters_only);
  EXPECT_EQ(back.counters.back().width_bits, 32);
}

// The job passes and every analysis, fed decoded ranks, give the single process's JSON.
TEST(RankTraceCodec, JobFromDecodedRanksReportsTheSame) {
  for (const char* sample : {"ddp", "native"}) {
    SCOPED_TRACE(sample);
    std::vector<std::string> files = SampleFiles(sample);
    auto direct = importers::LoadTrace(files, {});
    ASSERT_TRUE(direct.ok());
    std::vector<importers::ImportedFile> imported = importers::ImportFiles(files, {});
    for (importers::ImportedFile& f : imported)
      for (RankTrace& r : f.ranks) r = RoundTrip(r);
    auto assembled = importers::AssembleJob(files, std::move(imported), {});
    ASSERT_TRUE(assembled.ok());
    auto json = [](const Trace& t) { return report::AnalyzeToJson(t, analysis::Analyze(t, {})).dump(1); };
    EXPECT_EQ(json(*direct), json(*assembled));
  }
}

// What analyze keeps of a rank (model/host_events.h): the ProfilerStep ranges and the
// last host event, in order, the count of the rest; the window and the trace's end are
// the whole model's; a worker sends the count along.
TEST(RankTraceCodec, DroppedHostEventsKeepTheWindowAndTravel) {
  for (const char* sample : {"ddp", "native"}) {
    SCOPED_TRACE(sample);
    auto ranks = importers::ImportFile(SampleFiles(sample).front());
    auto again = importers::ImportFile(SampleFiles(sample).front());
    ASSERT_TRUE(ranks.ok() && again.ok());
    const RankTrace& whole = ranks->front();
    RankTrace slim = std::move(again->front());
    DropHostEvents(&slim);
    EXPECT_EQ(slim.host_events_dropped + slim.host.size() + slim.annotations.size(),
              whole.host.size() + whole.annotations.size());
    EXPECT_GT(slim.host_events_dropped, 0u);
    EXPECT_EQ(slim.flows.size(), 0u);
    size_t steps = 0;
    for (StringId n : whole.host.name) steps += whole.strings.Get(n).starts_with(kProfilerStepPrefix);
    for (StringId n : whole.annotations.name) steps += whole.strings.Get(n).starts_with(kProfilerStepPrefix);
    EXPECT_LE(slim.host.size() + slim.annotations.size(), steps + 1);
    if (whole.host.size() > 0) {
      TimeNs last = INT64_MIN, slim_last = INT64_MIN;
      for (TimeNs t : whole.host.end) last = std::max(last, t);
      for (TimeNs t : slim.host.end) slim_last = std::max(slim_last, t);
      EXPECT_EQ(slim_last, last);
    }
    for (size_t i = 1; i < slim.host.size(); ++i) EXPECT_LE(slim.host.start[i - 1], slim.host.start[i]);
    analysis::ActivityWindow a = analysis::SelectActivities(whole, {}), b = analysis::SelectActivities(slim, {});
    EXPECT_EQ(a.rows, b.rows);
    EXPECT_EQ(a.cutoff, b.cutoff);
    EXPECT_EQ(a.filtered, b.filtered);
    slim.part = 3;
    ExpectSameRank(slim, RoundTrip(slim));
  }
}

TEST(RankTraceCodec, DamagedBuffersFailCleanly) {
  auto ranks = importers::ImportFile(SampleFiles("native").front());
  ASSERT_TRUE(ranks.ok());
  std::vector<uint8_t> bytes;
  EncodeRankTrace(ranks->front(), &bytes);
  // Cut anywhere: an error, never a read past the end (ASan and the fuzzer build watch this).
  for (size_t n = 0; n < bytes.size(); n += 1 + n / 64) {
    auto cut = DecodeRankTrace(std::span<const uint8_t>(bytes.data(), n));
    EXPECT_FALSE(cut.ok()) << n;
  }
  auto cut = DecodeRankTrace(std::span<const uint8_t>(bytes.data(), bytes.size() - 1));
  EXPECT_EQ(cut.status().message().rfind("rank trace encoding: truncated", 0), 0u) << cut.status().message();
  EXPECT_NE(cut.status().message().find(" of " + std::to_string(bytes.size() - 1)), std::string::npos);

  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_NE(DecodeRankTrace(longer).status().message().find("1 bytes after the end"), std::string::npos);

  std::vector<uint8_t> other_version = bytes;
  other_version[4] ^= 0xff;
  EXPECT_NE(DecodeRankTrace(other_version).status().message().find("codec version"), std::string::npos);

  // A count that claims more than the buffer holds is refused before anything is sized.
  std::vector<uint8_t> huge = bytes;
  uint64_t lots = uint64_t{1} << 60;
  std::memcpy(huge.data() + 20, &lots, sizeof lots);  // after the header, rank and world size: the path's length
  EXPECT_NE(DecodeRankTrace(huge).status().message().find("larger than the buffer"), std::string::npos);
}

TEST(RankTraceCodec, ReferencesOutOfRangeAreRefused) {
  RankTrace r;
  StringId name = r.strings.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  r.gpu.Append(10, 20, name, 0, 7, 1, ActivityKind::kKernel);
  r.comms.Append(10, 20, CommOp::kAllReduce, StringId{}, 1, 1, 4, kNoIndex, 0, -1, 0);
  r.gpu.comm[0] = 0;
  ASSERT_TRUE(DecodeRankTrace([&] { std::vector<uint8_t> b; EncodeRankTrace(r, &b); return b; }()).ok());

  auto fails = [](const RankTrace& bad, const char* why) {
    std::vector<uint8_t> b;
    EncodeRankTrace(bad, &b);
    auto d = DecodeRankTrace(b);
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_NE(d.status().message().find(why), std::string::npos) << d.status().message();
  };
  RankTrace bad_name = RoundTrip(r);
  bad_name.gpu.name[0] = StringId{99};
  fails(bad_name, "outside the pool");
  RankTrace bad_row = RoundTrip(r);
  bad_row.gpu.comm[0] = 5;
  fails(bad_row, "comm op row 5 out of range");
  RankTrace bad_group = RoundTrip(r);
  bad_group.comms.group[0] = 3;
  fails(bad_group, "group row 3 out of range");
  RankTrace bad_enum = RoundTrip(r);
  bad_enum.gpu.cls[0] = static_cast<ActivityClass>(200);
  fails(bad_enum, "bad activity class");
}

// A table whose columns differ in length is refused: the analyses loop over the first
// column's rows and index every other column with them.
TEST(RankTraceCodec, ColumnsOfUnequalLengthAreRefused) {
  RankTrace r;
  const StringId name = r.strings.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  for (int i = 0; i < 2; ++i) {
    r.gpu.Append(10 + i, 20 + i, name, 0, 7, 1 + i, ActivityKind::kKernel);
    r.gpu.comm[i] = r.comms.Append(10 + i, 20 + i, CommOp::kAllReduce, StringId{}, 1, 1, 4, kNoIndex, i, -1, i);
    r.host.Append(1 + i, 2 + i, name, 10, 10, 1 + i, HostKind::kRuntime);
    r.annotations.Append(1 + i, 2 + i, name, StringId{}, 10, 10, -1);
    r.flows.Append(i, name, FlowPhase::kStart, 1 + i, 10, 10);
  }
  CounterSeries c;
  c.name = "net.tx_bytes";
  c.time = {1, 2};
  c.value = {5, 6};
  r.counters.push_back(c);
  ASSERT_TRUE(DecodeRankTrace([&] { std::vector<uint8_t> b; EncodeRankTrace(r, &b); return b; }()).ok());

  auto fails = [&](auto damage, const std::string& why) {
    RankTrace bad = RoundTrip(r);
    damage(bad);
    std::vector<uint8_t> b;
    EncodeRankTrace(bad, &b);
    auto d = DecodeRankTrace(b);
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_NE(d.status().message().find(why), std::string::npos) << d.status().message();
  };
  // The last column of each table one row short, or one row long.
  fails([](RankTrace& t) { t.gpu.launch.pop_back(); }, "GPU activities: column 12 (in model/trace.h order) has 1 rows, the table 2");
  fails([](RankTrace& t) { t.gpu.name.push_back({}); }, "GPU activities: column 3 (in model/trace.h order) has 3 rows");
  fails([](RankTrace& t) { t.host.kind.pop_back(); }, "host events: column 7");
  fails([](RankTrace& t) { t.annotations.depth.pop_back(); }, "annotations: column 8");
  fails([](RankTrace& t) { t.flows.tid.pop_back(); }, "flows: column 6");
  fails([](RankTrace& t) { t.comms.launch.pop_back(); }, "comm ops: column 18");
  fails([](RankTrace& t) { t.comms.activity.pop_back(); }, "comm ops: column 11");
  // The first column short: every other one is then longer than the table.
  fails([](RankTrace& t) { t.comms.start.pop_back(); }, "comm ops: column 2 (in model/trace.h order) has 2 rows, the table 1");
  fails([](RankTrace& t) { t.counters[0].value.pop_back(); }, "counter net.tx_bytes: 1 values at 2 times");

  // Times the importers never keep (model/trace.h): the analyses subtract them unchecked.
  // A comm op starting at kNoTime overflowed analysis/collectives.cc (found by summary_fuzzer).
  fails([](RankTrace& t) { t.comms.start[1] = kNoTime; }, "comm ops row 1: times");
  fails([](RankTrace& t) { t.gpu.end[0] = kTimeLimit; }, "GPU activities row 0: times");
  fails([](RankTrace& t) { t.host.end[1] = t.host.start[1] - 1; }, "host events row 1: times");
  fails([](RankTrace& t) { t.annotations.start[0] = -kTimeLimit; }, "annotations row 0: times");
  fails([](RankTrace& t) { t.counters[0].time[1] = INT64_MAX; }, "counter net.tx_bytes: a sample time out of range");
}

}  // namespace
}  // namespace commlens::model
