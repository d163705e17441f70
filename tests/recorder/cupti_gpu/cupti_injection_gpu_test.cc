// The plugin as CUDA's injection library on a real GPU (label "gpu"; exits 77, skipped,
// without one): a CUDA program that never uses NCCL, run with CUDA_INJECTION64_PATH
// naming the plugin and COMMLENS_CUPTI=1 as `commlens record --cupti` runs a job, leaves
// a rank's file with every kernel, copy and set it ran, on the wall clock; one that only
// initializes CUDA leaves no file.
//
//   COMMLENS_CUPTI_LIBRARY=/path/libcupti.so.13   (else the loader's search)
//   COMMLENS_TEST_OUTPUT=DIR                      (the files it writes; else the build's test-output)
#include <gtest/gtest.h>
#include <time.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "importers/native/native_importer.h"
#include "passes/finish.h"
#include "recorder/needs_gpu.h"
#include "recorder/recorder_test_util.h"
#include "small_cuda_program.h"

namespace commlens::recorder::cupti {
namespace {

namespace fs = std::filesystem;

const auto* const kNeedsGpu = ::testing::AddGlobalTestEnvironment(
    new commlens::testing::NeedsGpu(&testing::CudaDevices, "cupti_injection_gpu_test"));

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

fs::path OutputDir(const std::string& name) {
  const char* out = std::getenv("COMMLENS_TEST_OUTPUT");
  const fs::path dir = (out ? fs::path(out) : fs::path(COMMLENS_BINARY_DIR) / "test-output") / "cupti_injection" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs the small program as `commlens record --cupti` would run a process of the job.
int RunInjected(const fs::path& out, const std::string& args) {
  std::string env = "CUDA_INJECTION64_PATH='" COMMLENS_PLUGIN_PATH "' COMMLENS_CUPTI=1 COMMLENS_JOB_ID=inject ";
  env += "COMMLENS_OUT='" + out.string() + "' COMMLENS_FLUSH_INTERVAL_MS=50 ";
  if (const char* lib = std::getenv("COMMLENS_CUPTI_LIBRARY")) env += std::string("COMMLENS_CUPTI_LIBRARY='") + lib + "' ";
  return std::system((env + "'" COMMLENS_SMALL_PROGRAM "' " + args).c_str());
}

TEST(CuptiInjectionGpu, RecordsAProgramWithoutNccl) {
  const fs::path out = OutputDir("program");
  const fs::path counts = out / "counts.txt";
  const int64_t before = RealtimeNs();
  ASSERT_EQ(RunInjected(out, "24 '" + counts.string() + "'"), 0);
  const int64_t after = RealtimeNs();
  int scale = 0, add = 0;
  long long copy_bytes = 0, set_bytes = 0;
  std::ifstream(counts) >> scale >> add >> copy_bytes >> set_bytes;
  ASSERT_EQ(scale, 24);

  const std::vector<std::string> files = commlens::testing::TracesIn(out.string());
  ASSERT_EQ(files.size(), 1u);
  // No launcher, no NCCL: the process names no rank (a job's loader numbers it).
  EXPECT_NE(fs::path(files[0]).filename().string().rfind("inject.", 0), std::string::npos) << files[0];
  auto imported = importers::ImportNativeTrace(files[0]);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  model::RankTrace t = std::move(imported).value();
  passes::FinishRank(&t);
  EXPECT_EQ(t.rank, -1);
  EXPECT_EQ(t.comms.size(), 0u);
  int got_scale = 0, got_add = 0, h2d = 0, d2h = 0, sets = 0;
  for (uint32_t i = 0; i < t.gpu.size(); ++i) {
    const std::string_view name = t.strings.Get(t.gpu.name[i]);
    got_scale += name.find("commlens_test_scale") != std::string_view::npos;
    got_add += name.find("commlens_test_add") != std::string_view::npos;
    if (t.gpu.kind[i] == model::ActivityKind::kMemcpy && t.gpu.bytes[i] == copy_bytes) {
      h2d += t.gpu.copy[i] == model::CopyKind::kHtoD;
      d2h += t.gpu.copy[i] == model::CopyKind::kDtoH;
    }
    sets += t.gpu.kind[i] == model::ActivityKind::kMemset && t.gpu.bytes[i] == set_bytes;
    EXPECT_GE(t.gpu.start[i], before) << name;
    EXPECT_LE(t.gpu.end[i], after) << name;
  }
  EXPECT_EQ(got_scale, scale);
  EXPECT_EQ(got_add, add);
  EXPECT_EQ(h2d, 1);
  EXPECT_EQ(d2h, 1);
  EXPECT_EQ(sets, 1);
  std::string notes;
  for (const std::string& n : t.notes) notes += n + "\n";
  EXPECT_NE(notes.find("the GPU's activity only"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("no end record"), std::string::npos) << notes;
}

TEST(CuptiInjectionGpu, AProcessThatOnlyInitializesCudaLeavesNoFile) {
  const fs::path out = OutputDir("init_only");
  ASSERT_EQ(RunInjected(out, "--init-only"), 0);
  EXPECT_TRUE(commlens::testing::TracesIn(out.string()).empty());
}

}  // namespace
}  // namespace commlens::recorder::cupti
