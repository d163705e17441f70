// A recording with the CUPTI tracer answers what the PyTorch profiler's trace of the same
// job does (issue 28; examples/traces/recording-cupti): the same kernels per step, by
// name, on each rank; compute and communication per step within 5 %; the late rank, its
// cause and the kernel that made it late. Two separate runs of one job on the GPU
// machine, so timings differ by the runs' spread, not by the recorder. The same job on
// gloo (no NCCL in the job; the tracer started by CUDA's injection) likewise.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "testing/cli_run.h"

namespace commlens {
namespace {

using testing::Commlens;
using testing::kSamples;

struct Analysis {
  std::string json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
};

void Analyze(const std::string& folder, Analysis* a) {
  testing::CliRun run = Commlens("analyze " + kSamples + "/recording-cupti/" + folder + " --json - --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.out.substr(0, 2000);
  a->json = run.out;
  a->doc = a->parser.parse(a->json).value();
}

// Kernels per step and rank, by name, from the kernel table over the summarized steps.
std::map<std::string, double> KernelsPerStep(const simdjson::dom::element& doc) {
  int steps = 0;
  for (simdjson::dom::element s : simdjson::dom::array(doc["steps"])) steps += s["left_out"].is_null();
  std::map<std::string, double> per_step;
  const double ranks = double(int64_t(doc["world_size"]));
  for (simdjson::dom::element k : simdjson::dom::array(doc["kernel_breakdown"]["top_kernels"])) {
    const std::string_view cls = k["class"];
    if (cls != "compute" && cls != "communication") continue;  // a kernel, not a sync
    per_step[std::string(std::string_view(k["name"]))] = double(int64_t(k["count"])) / steps / ranks;
  }
  return per_step;
}

// Mean over the summarized steps of a step field.
double StepMean(const simdjson::dom::element& doc, const char* field) {
  double sum = 0;
  int n = 0;
  for (simdjson::dom::element s : simdjson::dom::array(doc["steps"]))
    if (s["left_out"].is_null()) sum += double(s[field]), ++n;
  return n ? sum / n : 0;
}

// The table's first rows (the recording's CUDA syncs, which the profiler did not record,
// may take one): every kernel in both, at the same count per step and rank. Returns how
// many kernels the two have in common.
int ExpectTheSameKernelsPerStep(const Analysis& kineto, const Analysis& native) {
  const std::map<std::string, double> want = KernelsPerStep(kineto.doc), got = KernelsPerStep(native.doc);
  int common = 0;
  for (const auto& [name, count] : want) {
    SCOPED_TRACE(name);
    auto it = got.find(name);
    if (it == got.end()) continue;
    EXPECT_DOUBLE_EQ(it->second, count);
    ++common;
  }
  return common;
}

TEST(Recording, TheSameKernelsPerStepAsTheProfiler) {
  Analysis kineto, native;
  Analyze("kineto", &kineto);
  Analyze("native", &native);
  EXPECT_GE(ExpectTheSameKernelsPerStep(kineto, native), 9);
  EXPECT_EQ(KernelsPerStep(native.doc).count("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            1u);
}

// A job without NCCL (gloo reduces the gradients through the host): the recording, whose
// tracer CUDA's injection started, has the profiler's kernels per step and its compute
// per step, and the node's counters beside.
TEST(Recording, AJobWithoutNcclHasItsKernelsAndTheNodesCounters) {
  Analysis kineto, native;
  Analyze("gloo-kineto", &kineto);
  Analyze("gloo-native", &native);
  EXPECT_GE(ExpectTheSameKernelsPerStep(kineto, native), 5);  // the table's rows: syncs and copies take some
  const double want = StepMean(kineto.doc, "compute_us"), got = StepMean(native.doc, "compute_us");
  ASSERT_GT(want, 0);
  EXPECT_LT(std::abs(got - want) / want, 0.05) << got << " against " << want;
  int ranks = 0;
  for (simdjson::dom::element in : simdjson::dom::array(native.doc["inputs"])) {
    if (std::string_view(in["format"]) != "native") continue;
    ++ranks;
    bool gpu_only = false;
    for (simdjson::dom::element n : simdjson::dom::array(in["notes"]))
      gpu_only |= std::string_view(n).find("the GPU's activity only") != std::string_view::npos;
    EXPECT_TRUE(gpu_only);
  }
  EXPECT_EQ(ranks, 2);
  EXPECT_GE(simdjson::dom::array(native.doc["gpu_metrics"]).size(), 1u);
  EXPECT_GE(simdjson::dom::array(native.doc["nics"]).size(), 1u);
  // The GPUs wait for the host (gloo's all-reduce) most of the step: the replay's verdict,
  // which shortens only the GPUs' share, is not listed first and says so; the idle GPUs are.
  for (Analysis* a : {&kineto, &native}) {
    simdjson::dom::array findings = a->doc["findings"];
    ASSERT_GE(findings.size(), 2u);
    EXPECT_EQ(std::string_view(findings.at(0)["rule"]), "idle");
    bool replay = false;
    for (simdjson::dom::element f : findings) {
      if (std::string_view(f["rule"]) != "replay") continue;
      replay = true;
      EXPECT_FALSE(bool(f["first"]));
      EXPECT_NE(std::string_view(f["text"]).find("waiting for the host"), std::string_view::npos);
    }
    EXPECT_TRUE(replay);
  }
}

TEST(Recording, ComputeAndCommunicationPerStepWithinFivePercent) {
  Analysis kineto, native;
  Analyze("kineto", &kineto);
  Analyze("native", &native);
  for (const char* field : {"compute_us", "comm_us"}) {
    SCOPED_TRACE(field);
    const double want = StepMean(kineto.doc, field), got = StepMean(native.doc, field);
    ASSERT_GT(want, 0);
    EXPECT_LT(std::abs(got - want) / want, 0.05) << got << " against " << want;
  }
  // Every NCCL op of the recording timed by its kernel (found by stream order: no CUDA
  // calls recorded), none left with host times.
  for (simdjson::dom::element in : simdjson::dom::array(native.doc["inputs"])) {
    if (std::string_view(in["format"]) != "native") continue;
    bool timed = false;
    for (simdjson::dom::element n : simdjson::dom::array(in["notes"])) {
      const std::string_view note = n;
      EXPECT_EQ(note.find("have no kernel timing"), std::string_view::npos) << note;
      timed |= note.find("65 ops timed by their kernels' CUPTI records") != std::string_view::npos;
    }
    EXPECT_TRUE(timed);
  }
}

TEST(Recording, TheLateRankItsCauseAndItsKernel) {
  for (const char* folder : {"kineto", "native"}) {
    SCOPED_TRACE(folder);
    Analysis a;
    Analyze(folder, &a);
    simdjson::dom::array stragglers = a.doc["cross_rank"]["stragglers"];
    ASSERT_GE(stragglers.size(), 1u);
    simdjson::dom::element s = stragglers.at(0);
    EXPECT_EQ(int64_t(s["rank"]), 1);
    EXPECT_EQ(std::string_view(s["cause"]), "compute");
    EXPECT_NE(std::string_view(simdjson::dom::array(s["kernels"]).at(0)).find("regular_fft"), std::string_view::npos);
  }
}

// With --cupti a helper process that inherited a rank's launcher variables and ran kernels
// writes a file under that rank: the rank is its process that made NCCL calls, else the
// one with the most GPU activity; the other is a warning, not a failure, wherever in time
// it ran (here a gloo rank's file, from another run, beside the NCCL job's).
TEST(Recording, AHelperProcessOfARankIsSetAside) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(COMMLENS_BINARY_DIR) / "test-output" / "recording_helpers";
  fs::remove_all(dir);
  for (const char* job : {"nccl", "gloo"}) fs::create_directories(dir / job);
  const fs::path samples = fs::path(kSamples) / "recording-cupti";
  fs::copy(samples / "native", dir / "nccl");
  fs::copy_file(samples / "gloo-native" / "gloo-rec.rank1.vm.1607.cltrace", dir / "nccl" / "slow-rec.rank1.vm.9999.cltrace");
  fs::copy(samples / "gloo-native", dir / "gloo");
  fs::copy_file(samples / "gloo-native" / "gloo-rec.rank0.vm.1606.cltrace", dir / "gloo" / "gloo-rec.rank0.vm.9999.cltrace");
  for (const char* job : {"nccl", "gloo"}) {
    SCOPED_TRACE(job);
    testing::CliRun run = Commlens("analyze " + (dir / job).string() + " --json - --quiet --strict");
    ASSERT_EQ(run.exit_code, 0) << run.out.substr(0, 2000);
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(run.out).value();
    EXPECT_EQ(int64_t(doc["world_size"]), 2);
    EXPECT_EQ(simdjson::dom::array(doc["failures"]).size(), 0u);
    int set_aside = 0;
    for (simdjson::dom::element w : simdjson::dom::array(doc["warnings"])) {
      const std::string_view text = w;
      set_aside += text.find("9999.cltrace: another process of rank") != std::string_view::npos &&
                   text.find("its GPU activity is left out") != std::string_view::npos;
    }
    EXPECT_EQ(set_aside, 1);
    for (simdjson::dom::element in : simdjson::dom::array(doc["inputs"]))
      EXPECT_EQ(std::string_view(in["path"]).find("9999"), std::string_view::npos);
  }
}

}  // namespace
}  // namespace commlens
