// The CUPTI tracer on a real GPU (label "gpu"; exits 77, skipped, without one): CUPTI's
// backend, every kind asked for, traces a small CUDA program and an NVTX range around
// it, attached late as the recorder attaches (CUDA already running); the drained
// records, written as a rank's file, read back through the native importer with every
// kernel, copy and set, each kernel joined to the launch call, the range around them, on
// the file's clock (CLOCK_REALTIME). With the default kinds (no CUDA calls), the program's
// stream is named by CUPTI's id, the one its kernels carry, and the activities are placed
// by their GPU start. A third program: another CUPTI subscriber already there, the tracer
// steps aside and says so.
//
//   COMMLENS_CUPTI_LIBRARY=/path/libcupti.so.13   (else the loader's search)
//   COMMLENS_TEST_OUTPUT=DIR                      (the files it writes; else the build's test-output)
#include <cupti.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"
#include "native_format/record_writer.h"
#include "passes/finish.h"
#include "recorder/cupti_tracer/backend_factory.h"
#include "recorder/cupti_tracer/tracer.h"
#include "recorder/needs_gpu.h"
#include "recorder/tracer_drains_file.h"
#include "small_cuda_program.h"

namespace commlens::recorder::cupti {
namespace {

namespace nf = native_format;

const auto* const kNeedsGpu =
    ::testing::AddGlobalTestEnvironment(new commlens::testing::NeedsGpu(&testing::CudaDevices, "cupti_gpu_test"));

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

std::string LibraryOption() {
  const char* l = std::getenv("COMMLENS_CUPTI_LIBRARY");
  return l ? l : "";
}

// The path of a loaded library whose file name starts with |prefix| ("" if none).
std::string LoadedLibrary(const std::string& prefix) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (std::filesystem::path(path).filename().string().rfind(prefix, 0) == 0) return path;
  }
  return "";
}

model::RankTrace Import(const std::vector<nf::RecordWriter>& drains, const std::string& name) {
  return testing::ImportRankFile(testing::RankFileWith(drains), "cupti_gpu", name);
}

TEST(CuptiGpu, TracesASmallCudaProgram) {
  ASSERT_EQ(testing::InitCuda(), "");
  Tracer tracer(NewCuptiBackend(LibraryOption(), kAllCuptiKinds));
  const bool tracing = tracer.Start();
  std::vector<nf::RecordWriter> drains(3);
  if (!tracing) {
    tracer.Drain(RealtimeNs(), &drains[0]);
    model::RankTrace why = Import(drains, "failed.cltrace");
    FAIL() << "the tracer did not start: " << (why.notes.empty() ? "no note" : why.notes.back());
  }
  // NVTX reaches CUPTI through NVTX's injection, named before the first NVTX call (as
  // `commlens record --cupti` names it in the job's environment).
  const std::string cupti = LoadedLibrary("libcupti");
  ASSERT_NE(cupti, "") << "libcupti is not loaded";
  setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);

  const int64_t before = RealtimeNs();
  nvtxRangePushA("commlens-gpu-test");
  const testing::SmallProgram p = testing::RunSmallProgram(16);
  nvtxRangePop();
  nvtxMarkA("commlens-gpu-mark");
  const int64_t after = RealtimeNs();
  ASSERT_EQ(p.error, "");
  tracer.Drain(RealtimeNs(), &drains[0]);  // a periodic flush: completed buffers only
  tracer.Stop();
  tracer.Drain(RealtimeNs(), &drains[1]);  // the rest
  EXPECT_EQ(tracer.dropped(), 0u);

  model::RankTrace t = Import(drains, "small_program.cltrace");
  int scale = 0, add = 0, h2d = 0, d2h = 0, sets = 0, launched = 0;
  for (uint32_t i = 0; i < t.gpu.size(); ++i) {
    const std::string_view name = t.strings.Get(t.gpu.name[i]);
    const bool ours_kernel = name.find("commlens_test_") != std::string_view::npos;
    if (ours_kernel) {
      scale += name.find("commlens_test_scale") != std::string_view::npos;
      add += name.find("commlens_test_add") != std::string_view::npos;
      launched += t.gpu.launch[i] != model::kNoTime;
      EXPECT_EQ(t.gpu.kind[i], model::ActivityKind::kKernel) << name;
      EXPECT_EQ(t.gpu.cls[i], model::ActivityClass::kCompute) << name;
    }
    if (t.gpu.kind[i] == model::ActivityKind::kMemcpy && t.gpu.bytes[i] == p.copy_bytes) {
      h2d += t.gpu.copy[i] == model::CopyKind::kHtoD;
      d2h += t.gpu.copy[i] == model::CopyKind::kDtoH;
    }
    sets += t.gpu.kind[i] == model::ActivityKind::kMemset && t.gpu.bytes[i] == p.set_bytes;
    if (ours_kernel || t.gpu.kind[i] != model::ActivityKind::kKernel) {
      // On the file's clock: inside the wall-clock stretch that ran them.
      EXPECT_GE(t.gpu.start[i], before) << name;
      EXPECT_LE(t.gpu.end[i], after) << name;
      EXPECT_LE(t.gpu.start[i], t.gpu.end[i]) << name;
    }
  }
  EXPECT_EQ(scale, p.scale_kernels);
  EXPECT_EQ(add, p.add_kernels);
  EXPECT_EQ(launched, scale + add);  // each kernel joined to its cudaLaunchKernel
  EXPECT_EQ(h2d, 1);
  EXPECT_EQ(d2h, 1);
  EXPECT_EQ(sets, 1);
  int launch_calls = 0;
  for (uint32_t i = 0; i < t.host.size(); ++i)
    launch_calls += t.strings.Get(t.host.name[i]).find("LaunchKernel") != std::string_view::npos;
  EXPECT_GE(launch_calls, scale + add);

  bool range = false, mark = false;
  for (uint32_t i = 0; i < t.annotations.size(); ++i) {
    const std::string_view name = t.strings.Get(t.annotations.name[i]);
    if (name == "commlens-gpu-test") {
      range = true;
      EXPECT_GE(t.annotations.start[i], before);
      EXPECT_LE(t.annotations.end[i], after);
    }
    mark = mark || name == "commlens-gpu-mark";
  }
  EXPECT_TRUE(range) << "the NVTX range did not arrive (NVTX_INJECTION64_PATH=" << cupti << ")";
  EXPECT_TRUE(mark);
  std::printf("recorded %zu GPU activities, %zu CUDA calls, %zu ranges\n", t.gpu.size(), t.host.size(),
              t.annotations.size());
}

// The default kinds: no CUDA calls recorded; the stream NCCL would launch on is named by
// CUPTI's id (a StreamId record), the id the program's kernels carry.
TEST(CuptiGpu, NamesTheLaunchStreamWithTheDefaultKinds) {
  ASSERT_EQ(testing::InitCuda(), "");
  Tracer tracer(NewCuptiBackend(LibraryOption()));
  ASSERT_TRUE(tracer.Start());
  uint64_t stream = 0;
  const testing::SmallProgram p = testing::RunSmallProgram(4, [&](uint64_t s) {
    stream = s;
    tracer.NoteLaunchStream(s);
    tracer.NoteLaunchStream(s);  // named once
  });
  ASSERT_EQ(p.error, "");
  std::vector<nf::RecordWriter> drains(2);
  tracer.Stop();
  tracer.Drain(RealtimeNs(), &drains[0]);
  const std::vector<uint8_t> bytes = testing::RankFileWith(drains);
  std::vector<nf::StreamIdRecord> ids;
  nf::RecordReader reader(bytes, sizeof(nf::FileHeader));
  for (nf::RecordView r; reader.Next(&r) == nf::ReadStatus::kRecord;)
    if (r.type == static_cast<uint16_t>(nf::RecordType::kStreamId)) {
      ASSERT_TRUE(nf::DecodePayload(r, &ids.emplace_back()));
    }
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].stream, stream);

  model::RankTrace t = testing::ImportRankFile(bytes, "cupti_gpu", "default_kinds.cltrace");
  EXPECT_TRUE(t.launches_unrecorded);
  EXPECT_EQ(t.host.size(), 0u);  // no CUDA calls
  int kernels = 0, copies = 0, sets = 0;
  for (uint32_t i = 0; i < t.gpu.size(); ++i) {
    const std::string_view name = t.strings.Get(t.gpu.name[i]);
    if (name.find("commlens_test_") != std::string_view::npos) {
      ++kernels;
      EXPECT_EQ(static_cast<uint32_t>(t.gpu.stream[i]), ids[0].cupti_stream) << name;
    }
    copies += t.gpu.kind[i] == model::ActivityKind::kMemcpy && t.gpu.bytes[i] == p.copy_bytes;
    sets += t.gpu.kind[i] == model::ActivityKind::kMemset && t.gpu.bytes[i] == p.set_bytes;
  }
  EXPECT_EQ(kernels, p.scale_kernels + p.add_kernels);
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(sets, 1);
}

// Run alone (its own ctest entry): another client subscribed to CUPTI first, as the
// PyTorch profiler or Nsight Systems does; the tracer must leave it be and say why.
TEST(CuptiGpu, StepsAsideForAnotherSubscriber) {
  ASSERT_EQ(testing::InitCuda(), "");
  const std::string library = LibraryOption().empty() ? "libcupti.so.13" : LibraryOption();
  void* cupti = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(cupti, nullptr) << dlerror();
  using Subscribe = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  auto subscribe = reinterpret_cast<Subscribe>(dlsym(cupti, "cuptiSubscribe"));
  ASSERT_NE(subscribe, nullptr);
  CUpti_SubscriberHandle other = nullptr;
  ASSERT_EQ(subscribe(&other, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr),
            CUPTI_SUCCESS);

  Tracer tracer(NewCuptiBackend(LibraryOption()));
  EXPECT_FALSE(tracer.Start());
  EXPECT_FALSE(tracer.tracing());
  std::vector<nf::RecordWriter> drains(1);
  tracer.Drain(RealtimeNs(), &drains[0]);
  model::RankTrace t = Import(drains, "stepped_aside.cltrace");
  // The tracer's note, among the reader's own (the drain has no end record).
  std::string notes;
  for (const std::string& n : t.notes) notes += n + "\n";
  EXPECT_NE(notes.find("stepped aside"), std::string::npos) << notes;
  EXPECT_EQ(t.gpu.size(), 0u);
  // The other client still holds CUPTI: the tracer's probe let go of nothing of its.
  using Unsubscribe = CUptiResult (*)(CUpti_SubscriberHandle);
  auto unsubscribe = reinterpret_cast<Unsubscribe>(dlsym(cupti, "cuptiUnsubscribe"));
  EXPECT_EQ(unsubscribe(other), CUPTI_SUCCESS);
}

// A client that subscribes after the tracer started (a PyTorch profiler started later in
// the job): at its next drain the tracer lets CUPTI go, keeps what it recorded, and says
// when; the other client's subscription is left as it was.
TEST(CuptiGpu, LetsGoForASubscriberThatComesLater) {
  ASSERT_EQ(testing::InitCuda(), "");
  Tracer tracer(NewCuptiBackend(LibraryOption(), kCuptiKernels));
  ASSERT_TRUE(tracer.Start());
  const testing::SmallProgram p = testing::RunSmallProgram(8);
  ASSERT_EQ(p.error, "");
  std::vector<nf::RecordWriter> drains(2);
  tracer.Drain(RealtimeNs(), &drains[0]);
  EXPECT_TRUE(tracer.tracing());

  const std::string library = LibraryOption().empty() ? "libcupti.so.13" : LibraryOption();
  void* cupti = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(cupti, nullptr) << dlerror();
  using Subscribe = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  auto subscribe = reinterpret_cast<Subscribe>(dlsym(cupti, "cuptiSubscribe"));
  CUpti_SubscriberHandle other = nullptr;
  ASSERT_EQ(subscribe(&other, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr),
            CUPTI_SUCCESS);
  tracer.Drain(RealtimeNs(), &drains[1]);
  EXPECT_FALSE(tracer.tracing());
  tracer.Stop();  // nothing reaches CUPTI any more
  model::RankTrace t = Import(drains, "let_go.cltrace");
  std::string notes;
  for (const std::string& n : t.notes) notes += n + "\n";
  EXPECT_NE(notes.find("stepped aside during the run (another CUPTI client subscribed"), std::string::npos) << notes;
  EXPECT_GE(t.gpu.size(), 8u);  // the kernels before it
  using Unsubscribe = CUptiResult (*)(CUpti_SubscriberHandle);
  auto unsubscribe = reinterpret_cast<Unsubscribe>(dlsym(cupti, "cuptiUnsubscribe"));
  EXPECT_EQ(unsubscribe(other), CUPTI_SUCCESS);
}

}  // namespace
}  // namespace commlens::recorder::cupti
