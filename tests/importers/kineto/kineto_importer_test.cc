// Kineto importer: exact time conversion, tables written from a hand-written trace that
// has the shape of PyTorch 2.11's output, and the errors bad input must produce.
#include <gtest/gtest.h>

#include <string>

#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_table_writer.h"
#include "importers/kineto/time_text.h"
#include "model/activity_class.h"
#include "passes/finish.h"

namespace commlens::importers {
namespace {

Result<model::RankTrace> ImportText(const std::string& json, const std::string& name = "t.json") {
  Result<InputFile> f = DecodeInput(json, name);
  if (!f.ok()) return f.status();
  Result<model::RankTrace> r = ImportKinetoTrace(f->buffer, name);
  if (r.ok()) passes::FinishRank(&r.value());  // as the loader does
  return r;
}

TEST(TimeText, ConvertsMicrosecondTextExactly) {
  int64_t ns = 0;
  ASSERT_TRUE(MicrosTextToNanos("4396420148166.758", &ns));
  EXPECT_EQ(ns, 4396420148166758);
  ASSERT_TRUE(MicrosTextToNanos("12", &ns));
  EXPECT_EQ(ns, 12000);
  ASSERT_TRUE(MicrosTextToNanos("0.5", &ns));
  EXPECT_EQ(ns, 500);
  ASSERT_TRUE(MicrosTextToNanos("1.0004", &ns));  // beyond ns: rounded
  EXPECT_EQ(ns, 1000);
  ASSERT_TRUE(MicrosTextToNanos("1.0005", &ns));
  EXPECT_EQ(ns, 1001);
  ASSERT_TRUE(MicrosTextToNanos("1661203462598738", &ns));  // epoch us, 16 digits
  EXPECT_EQ(ns, 1661203462598738000);
  ASSERT_TRUE(MicrosTextToNanos("-3.25", &ns));
  EXPECT_EQ(ns, -3250);
  ASSERT_TRUE(MicrosTextToNanos("1.5e3", &ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(MicrosTextToNanos("\"12\"", &ns));
  EXPECT_FALSE(MicrosTextToNanos("", &ns));
  EXPECT_FALSE(MicrosTextToNanos("1.", &ns));
}

TEST(KinetoTableWriter, ParsesRankLists) {
  EXPECT_EQ(ParseRankList("[0, 1, 2, 3]"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ParseRankList("[0, 8, 16, ...]"), (std::vector<int>{0, 8, 16}));
  EXPECT_TRUE(ParseRankList("").empty());
  // A rank beyond int's range ends the list: it is not wrapped into a wrong rank.
  EXPECT_EQ(ParseRankList("[1, 2147483647, 2147483648, 3]"), (std::vector<int>{1, 2147483647}));
  EXPECT_EQ(ParseRankList("[99999999999999999999999]"), (std::vector<int>{}));
}

TEST(KinetoImporter, OutOfRangeRanksAreCountedNotWrapped) {
  std::string json = R"({"distributedInfo": {"rank": 99999999999, "world_size": 4,
      "pg_config": [{"pg_name": "0", "pg_size": 4, "ranks": [0, 4294967296]}]},
    "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
     "args": {"stream": 7, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 4,
              "Out msg nelems": 4, "Process Group Name": "0", "Process Group Ranks": "[0, 1, 4294967296]",
              "Group size": 4, "Dst Rank": 8589934592}}
  ]})";
  Result<model::RankTrace> r = ImportText(json);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const model::RankTrace& t = *r;
  EXPECT_EQ(t.rank, -1);  // not a wrapped number: the loader falls back to the file name
  EXPECT_EQ(t.stats.count(model::ImportIssue::kMalformedEvent), 2u);  // rank, pg_config ranks
  EXPECT_EQ(t.stats.count(model::ImportIssue::kBadCollectiveArgs), 2u);  // group ranks, peer
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms.peer[0], -1);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0}));
}

TEST(KinetoImporter, TimesBeyondAnyClockAreBadFields) {
  std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "far", "pid": 0, "tid": 7, "ts": 9000000000000000, "dur": 2, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "long", "pid": 0, "tid": 7, "ts": 1, "dur": 8000000000000000, "args": {"stream": 7}}
  ]})";
  Result<model::RankTrace> r = ImportText(json);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gpu.size(), 1u);
  EXPECT_EQ(r->stats.count(model::ImportIssue::kMalformedEvent), 2u);
}

TEST(KinetoImporter, KeepsFlowsInstantsAndThreadNames) {
  std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 5, "tid": 6, "ts": 10, "dur": 5},
    {"ph": "s", "id": 3, "pid": 5, "tid": 6, "ts": 11, "cat": "fwdbwd", "name": "fwdbwd"},
    {"ph": "f", "id": 3, "pid": 5, "tid": 9, "ts": 40, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"},
    {"ph": "i", "s": "t", "pid": 5, "tid": 6, "ts": 50, "name": "Iteration Start: PyTorch Profiler"},
    {"ph": "M", "name": "thread_name", "pid": 5, "tid": 6, "args": {"name": "python main"}},
    {"ph": "b", "id": 1, "pid": 5, "tid": 6, "ts": 60, "cat": "async", "name": "weird"}
  ]})";
  Result<model::RankTrace> r = ImportText(json);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const model::RankTrace& t = *r;
  ASSERT_EQ(t.flows.size(), 2u);
  EXPECT_EQ(t.flows.id[0], 3);
  EXPECT_EQ(t.flows.phase[0], model::FlowPhase::kStart);
  EXPECT_EQ(t.flows.phase[1], model::FlowPhase::kEnd);
  EXPECT_EQ(t.flows.tid[1], 9);
  EXPECT_EQ(t.strings.Get(t.flows.category[0]), "fwdbwd");
  ASSERT_EQ(t.annotations.size(), 1u);  // the instant, zero length
  EXPECT_EQ(t.annotations.start[0], t.annotations.end[0]);
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].tid, 6);
  EXPECT_EQ(t.threads[0].name, "python main");
  // A phase commlens does not read is counted, not silently dropped.
  EXPECT_EQ(t.stats.count(model::ImportIssue::kUnknownPhase), 1u);
}

// A trimmed real trace: metadata, a ProfilerStep pair, runtime launches, a GEMM, an NCCL
// all-reduce with PyTorch's collective args, a memcpy, flows and metadata events.
const char* kTrace = R"JSON({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4, "pg_count": 2,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [0, 1, 2, 3]},
                  {"pg_name": "1", "pg_desc": "ep", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [0, 1, 2, 3]}],
    "nccl_version": "2.28.9"},
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10, "ts": 100.0, "dur": 100.0, "args": {"External id": 1}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 10, "tid": 10, "ts": 200.0, "dur": 100.0, "args": {"External id": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 110.5, "dur": 5, "args": {"cbid": 211, "correlation": 7}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 10, "tid": 10, "ts": 120.25, "dur": 5, "args": {"cbid": 652, "correlation": 8}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 10, "ts": 310, "dur": 5, "args": {"correlation": 9}},
  {"ph": "s", "id": 7, "pid": 10, "tid": 10, "ts": 110.5, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_gemm", "pid": 0, "tid": 7, "ts": 130.001, "dur": 20.5, "args": {"device": 0, "stream": 7, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 19, "ts": 140, "dur": 50,
   "args": {"device": 0, "stream": 19, "correlation": 8, "Collective name": "allreduce", "In msg nelems": 4194304, "Out msg nelems": 4194304,
            "Group size": 4, "dtype": "Float", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0",
            "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 320, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 9, "bytes": 1024}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#4", "pid": 0, "tid": 7, "ts": 199, "dur": 102},
  {"name": "process_name", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"name": "python"}},
  {"ph": "X", "cat": "Trace", "ts": 0, "dur": 400, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
  ],
  "traceName": "rank3.json"
})JSON";

// PyTorch's "Seq" (a group's collective number, alike on every member) is kept: the
// ops are matched across ranks by it.
TEST(KinetoImporter, KeepsTheCollectiveSeqNumber) {
  std::string text = kTrace;
  const std::string at = "\"Process Group Ranks\": \"[0, 1, 2, 3]\"}}";
  size_t pos = text.find(at);
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos + at.size() - 2, ", \"Seq\": 41");
  Result<model::RankTrace> r = ImportText(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->comms.size(), 1u);
  EXPECT_EQ(r->comms.seq[0], 41);
}

TEST(KinetoImporter, WritesTablesFromARealShapedTrace) {
  Result<model::RankTrace> r = ImportText(kTrace);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const model::RankTrace& t = *r;
  const int64_t base = 1790857026000000000;
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.backend, "nccl");
  EXPECT_EQ(t.nccl_version, "2.28.9");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sm_count, 132);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[1].description, "ep");
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));

  ASSERT_EQ(t.gpu.size(), 3u);  // gemm, nccl, memcpy (sorted by start)
  EXPECT_EQ(t.strings.Get(t.gpu.name[0]), "nvjet_sm90_gemm");
  EXPECT_EQ(t.gpu.start[0], base + 130001);
  EXPECT_EQ(t.gpu.end[0], base + 150501);
  EXPECT_EQ(t.gpu.cls[0], model::ActivityClass::kCompute);
  EXPECT_EQ(t.gpu.cls[1], model::ActivityClass::kCommunication);
  EXPECT_EQ(t.gpu.stream[1], 19);
  EXPECT_EQ(t.gpu.cls[2], model::ActivityClass::kMemory);
  EXPECT_EQ(t.gpu.launch[0], base + 110500);  // linked through correlation 7
  EXPECT_EQ(t.gpu.launch[1], base + 120250);  // driver launch, correlation 8

  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms.op[0], model::CommOp::kAllReduce);
  EXPECT_EQ(t.comms.bytes[0], 4194304 * 4);
  EXPECT_EQ(t.comms.seq[0], 0);
  EXPECT_EQ(t.comms.activity[0], 1u);
  EXPECT_EQ(t.gpu.comm[1], 0u);
  EXPECT_EQ(t.groups[t.comms.group[0]].name, "0");

  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].number, 3);
  EXPECT_EQ(t.steps[1].start, base + 200000);
  // host: 3 runtime/driver calls; the Trace span is skipped
  EXPECT_EQ(t.host.size(), 3u);
  EXPECT_EQ(t.host.pid[0], 10);
  // annotations: 2 host-side steps, depth 0, and the GPU-side step on stream 7
  ASSERT_EQ(t.annotations.size(), 3u);
  EXPECT_EQ(t.annotations.device[0], -1);
  EXPECT_EQ(t.annotations.depth[0], 0);
  EXPECT_EQ(t.annotations.device[2], 0);
  EXPECT_EQ(t.annotations.tid[2], 7);
  // the memcpy's bytes and direction
  EXPECT_EQ(t.gpu.bytes[2], 1024);
  EXPECT_EQ(t.gpu.copy[2], model::CopyKind::kDtoD);
  EXPECT_EQ(t.gpu.bytes[0], -1);
  // metadata: the process name; launch flows (ac2g) are the correlation ids, not flows
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].name, "python");
  EXPECT_EQ(t.threads[0].tid, -1);
  EXPECT_EQ(t.flows.size(), 0u);
  EXPECT_EQ(t.stats.total(), 0u);
}

TEST(KinetoImporter, CountsBadEventsAndKeepsTheRest) {
  std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "good", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "no dur", "pid": 0, "tid": 7, "ts": 1},
    {"ph": "X", "cat": "kernel", "name": "negative", "pid": 0, "tid": 7, "ts": 5, "dur": -1},
    {"ph": "X", "cat": "kernel", "name": "bad ts", "pid": 0, "tid": 7, "ts": "soon", "dur": 1},
    {"ph": "X", "cat": "kernel", "name": ["not", "a", "string"], "ts": 1, "dur": 1},
    42,
    {"ph": "X", "cat": "kernel", "name": "good2", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"stream": 7}}
  ]})";
  Result<model::RankTrace> r = ImportText(json);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gpu.size(), 2u);
  EXPECT_EQ(r->stats.count(model::ImportIssue::kMissingTime), 1u);
  EXPECT_EQ(r->stats.count(model::ImportIssue::kNegativeDuration), 1u);
  EXPECT_EQ(r->stats.count(model::ImportIssue::kMalformedEvent), 3u);
  EXPECT_GT(r->stats.examples(model::ImportIssue::kMalformedEvent)[0].offset, 0u);
  EXPECT_EQ(r->rank, -1);  // no distributedInfo: the loader decides
}

TEST(KinetoImporter, TruncatedJsonNamesFileAndOffset) {
  std::string json(kTrace);
  json.resize(json.size() / 2);
  Result<model::RankTrace> r = ImportText(json, "rank0.json");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("rank0.json"), std::string::npos) << m;
  EXPECT_NE(m.find("at byte"), std::string::npos) << m;
}

TEST(KinetoImporter, RejectsWhatIsNotAKinetoTrace) {
  EXPECT_NE(ImportText("[1, 2, 3]").status().message().find("not a Kineto trace"), std::string::npos);
  EXPECT_NE(ImportText(R"({"a": 1})").status().message().find("no \"traceEvents\""),
            std::string::npos);
  EXPECT_NE(ImportText(R"({"traceEvents": 5})").status().message().find("not an array"),
            std::string::npos);
  EXPECT_FALSE(ImportText("{\"traceEvents\": [ {\"ph\": \"X\" ").ok());
  EXPECT_FALSE(ImportText("not json at all").ok());
}

TEST(InputFile, GzipErrors) {
  Result<InputFile> r = DecodeInput("{\"traceEvents\": []}", "rank0.json.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not gzip"), std::string::npos);
  // A gzip header followed by garbage
  std::string bad = std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + "garbage!garbage!";
  r = DecodeInput(bad, "x.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.gz"), std::string::npos);
}

}  // namespace
}  // namespace commlens::importers
