// The Python reader the GPU machine's check script uses (examples/workloads/native_trace.py)
// must read the plugin's files as the C++ importer does: same ops, same durations, same
// drop count.
#include <stdio.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "importers/native/native_importer.h"
#include "recorder/fake_nccl.h"
#include "recorder/recorded_trace.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {
namespace {

// |script| (from the source tree's root) run by Python with |args|: what it printed.
std::string RunScript(const std::string& script, const std::string& args) {
  std::string cmd = std::string(COMMLENS_PYTHON) + " " + COMMLENS_SOURCE_DIR + "/" + script + " " + args;
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd;
  return out;
}

std::string RunPython(const std::string& args) { return RunScript("examples/workloads/native_trace.py", args); }

// The folder's one trace, read by the importer and by the Python reader.
struct BothReads {
  std::string file;
  model::RankTrace cpp;
  nlohmann::json py;
};
BothReads ReadBoth(const std::string& dir) {
  BothReads r;
  std::vector<std::string> files = TracesIn(dir);
  EXPECT_EQ(files.size(), 1u);
  if (files.empty()) return r;
  r.file = files[0];
  auto cpp = importers::ImportNativeTrace(r.file);
  EXPECT_TRUE(cpp.ok()) << cpp.status().message();
  if (cpp.ok()) r.cpp = std::move(cpp).value();
  r.py = nlohmann::json::parse(RunPython("--json " + r.file));
  return r;
}

TEST(PythonReaderTest, AgreesWithTheImporter) {
  const std::string dir = FreshDir("python_reader");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"COMMLENS_BUFFER_EVENTS", "8"},
                  {"COMMLENS_FLUSH_INTERVAL_MS", "3600000"}, {"RANK", "2"}};
  static int mask = 0;
  FakeNccl<6> nccl;
  ASSERT_EQ(nccl.Init(0x99, "py", 1, 4, 2, &mask), 0);
  for (int i = 0; i < 6; ++i) {
    FakeCollective c;
    c.func = i % 2 ? "ReduceScatter" : "AllReduce";
    c.count = 1000 + i;
    c.seq = static_cast<uint64_t>(i / 2);
    c.gpu_start = 1'000'000 + 10'000 * static_cast<uint64_t>(i);
    c.gpu_duration = 2'000 + 100 * static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
  nccl.P2p(FakeP2p{"Recv", "ncclFloat16", 512, 0, 1, 2'000'000, 900});
  for (int i = 0; i < 10; ++i) nccl.Collective(FakeCollective{});  // the pools overflow
  ASSERT_EQ(nccl.Finalize(), 0);

  BothReads both = ReadBoth(dir);
  ASSERT_FALSE(both.file.empty());
  const model::RankTrace* cpp = &both.cpp;
  const nlohmann::json& py = both.py;

  EXPECT_EQ(py["rank"], 2);
  EXPECT_EQ(py["status"], "end");
  EXPECT_EQ(py["ended"], true);
  EXPECT_EQ(py["abi_version"], 6);
  EXPECT_EQ(py["dropped"].get<uint64_t>(), cpp->stats.count(model::ImportIssue::kDroppedByRecorder));
  ASSERT_EQ(py["ops"].size(), cpp->comms.size());
  ASSERT_EQ(cpp->comms.size(), 8u);  // 8 op slots
  for (size_t i = 0; i < cpp->comms.size(); ++i) {
    const auto& op = py["ops"][i];
    SCOPED_TRACE("op " + std::to_string(i));
    EXPECT_EQ(op["end_ns"].get<int64_t>() - op["start_ns"].get<int64_t>(), cpp->comms.end[i] - cpp->comms.start[i]);
    EXPECT_EQ(op["start_ns"].get<int64_t>(), cpp->comms.start[i]);  // one clock bucket: same offset
    EXPECT_EQ(std::string(model::CommOpName(model::CommOpFromNcclFunc(op["func"].get<std::string>()))),
              std::string(model::CommOpName(cpp->comms.op[i])));
  }
  // The one-line form says the same.
  EXPECT_NE(RunPython(both.file).find("ops 8 (GPU-timed 8"), std::string::npos);
}

// Ops timed by CUDA events around their launches (format 1.7; the plugin with a stand-in
// CUDA driver): the Python reader gives them the same times as the importer.
TEST(PythonReaderTest, AgreesWithTheImporterOnLaunchTimes) {
  const std::string dir = FreshDir("python_reader_launches");
  RecorderEnv env{{"COMMLENS_OUT", dir}, {"RANK", "1"}, {"COMMLENS_CUDA_DRIVER", COMMLENS_FAKE_CUDA_DRIVER}};
  static int mask = 0;
  FakeNccl<6> nccl;
  ASSERT_EQ(nccl.Init(0x9A, "py", 1, 2, 1, &mask), 0);
  for (int i = 0; i < 4; ++i) {
    FakeCollective c;
    c.seq = static_cast<uint64_t>(i);
    nccl.Collective(c);
  }
  usleep(50'000);  // the stand-in GPU's last kernel has run
  ASSERT_EQ(nccl.Finalize(), 0);
  BothReads both = ReadBoth(dir);
  ASSERT_FALSE(both.file.empty());
  const model::RankTrace* cpp = &both.cpp;
  const nlohmann::json& py = both.py;
  ASSERT_EQ(py["ops"].size(), 4u);
  ASSERT_EQ(cpp->comms.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("op " + std::to_string(i));
    EXPECT_TRUE(py["ops"][i]["gpu_timed"].get<bool>());
    EXPECT_EQ(py["ops"][i]["start_ns"].get<int64_t>(), cpp->comms.start[i]);
    EXPECT_EQ(py["ops"][i]["end_ns"].get<int64_t>(), cpp->comms.end[i]);
    EXPECT_EQ(cpp->comms.flags[i] & model::kCommNoGpuTiming, 0);
  }
  // What timing cost the launching thread (1.9), as the importer's note says it.
  EXPECT_EQ(py["launch_timing_host_launches"].get<uint64_t>(), 4u);
  EXPECT_GT(py["launch_timing_host_ns"].get<uint64_t>(), 0u);
  EXPECT_TRUE(HasNote(*cpp, "the mean over 4 launches"));
  // The launches' host spans, as scripts/recorder/launch_host_times.py prints them: one
  // line per kind, counting this recording's 4 launches, groups and collective calls.
  const std::string spans = RunScript("scripts/recorder/launch_host_times.py", both.file);
  EXPECT_NE(spans.find("kernel launch, us   4: p10 "), std::string::npos) << spans;
  EXPECT_NE(spans.find("group, us           4: p10 "), std::string::npos) << spans;
  EXPECT_NE(spans.find("collective call, us 4: p10 "), std::string::npos) << spans;
}

}  // namespace
}  // namespace commlens::testing
