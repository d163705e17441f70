// CUPTI's activity records (built here from the CUDA 13 headers' structs, as CUPTI fills
// its buffers) translated for the tracer: every field the format keeps lands where the
// reader expects it; a range's START and END become one range; a sync takes its device
// from its context; untimed kernels and kinds the tracer does not keep are left out. And
// the backend without CUPTI: it fails to start, and says how to give it one.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "recorder/cupti_tracer/cupti_backend.h"
#include "recorder/cupti_tracer/cupti_translate.h"
#include "recorder/cupti_tracer/tracer.h"

namespace commlens::recorder::cupti {
namespace {

namespace nf = native_format;

struct Caught : ActivitySink {
  std::vector<std::pair<nf::GpuActivityRecord, std::string>> gpu;
  std::vector<std::pair<nf::CudaApiRecord, std::string>> api;
  std::vector<std::tuple<nf::RangeRecord, std::string, std::string>> ranges;
  void OnGpuActivity(const nf::GpuActivityRecord& r, std::string_view n) override { gpu.emplace_back(r, n); }
  void OnCudaApi(const nf::CudaApiRecord& r, std::string_view n) override { api.emplace_back(r, n); }
  void OnRange(const nf::RangeRecord& r, std::string_view n, std::string_view d) override { ranges.emplace_back(r, n, d); }
  void OnDropped(uint64_t) override {}
};

template <typename T>
T Zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof(t));
  t.kind = kind;
  return t;
}

Translator Make() {
  return Translator([](bool runtime, uint32_t cbid) { return (runtime ? "cuda" : "cu") + std::to_string(cbid); });
}

TEST(CuptiTranslate, KernelsCopiesSetsAndCalls) {
  Translator t = Make();
  Caught c;
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 1'000, k.end = 9'000, k.deviceId = 3, k.contextId = 1, k.streamId = 13, k.correlationId = 77;
  k.name = "_Z10gemmKernelv";
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&k), &c));
  auto m = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.start = 10, m.end = 20, m.bytes = 1 << 20, m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, m.correlationId = 78;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&m), &c));
  auto p = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p.start = 30, p.end = 40, p.bytes = 4096;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&p), &c));
  auto s = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.start = 50, s.end = 60, s.bytes = 256;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&s), &c));
  auto a = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  a.start = 900, a.end = 950, a.correlationId = 77, a.threadId = 4321, a.cbid = 211;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&a), &c));
  auto d = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  d.cbid = 320;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&d), &c));
  auto untimed = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  EXPECT_FALSE(t.Translate(reinterpret_cast<CUpti_Activity*>(&untimed), &c));

  ASSERT_EQ(c.gpu.size(), 4u);
  const nf::GpuActivityRecord& kr = c.gpu[0].first;
  EXPECT_EQ(c.gpu[0].second, "gemmKernel()");  // demangled, as Kineto shows it
  EXPECT_EQ(kr.kind, static_cast<uint8_t>(nf::GpuActivityKind::kKernel));
  EXPECT_EQ(kr.start_ns, 1'000);
  EXPECT_EQ(kr.end_ns, 9'000);
  EXPECT_EQ(kr.device, 3);
  EXPECT_EQ(kr.stream, 13u);
  EXPECT_EQ(kr.correlation, 77u);
  EXPECT_EQ(kr.bytes, -1);
  EXPECT_EQ(c.gpu[1].second, "Memcpy DtoH");
  EXPECT_EQ(c.gpu[1].first.copy_kind, static_cast<uint8_t>(nf::CopyKindCode::kDtoH));
  EXPECT_EQ(c.gpu[1].first.bytes, 1 << 20);
  EXPECT_EQ(c.gpu[2].first.copy_kind, static_cast<uint8_t>(nf::CopyKindCode::kPtoP));
  EXPECT_EQ(c.gpu[3].first.kind, static_cast<uint8_t>(nf::GpuActivityKind::kMemset));
  EXPECT_EQ(c.gpu[3].first.bytes, 256);
  ASSERT_EQ(c.api.size(), 2u);
  EXPECT_EQ(c.api[0].second, "cuda211");
  EXPECT_EQ(c.api[0].first.tid, 4321);
  EXPECT_EQ(c.api[0].first.correlation, 77u);
  EXPECT_EQ(c.api[1].first.kind, static_cast<uint8_t>(nf::CudaApiKind::kDriver));
  EXPECT_EQ(c.api[1].second, "cu320");
}

TEST(CuptiTranslate, ASyncTakesItsContextsDevice) {
  Translator t = Make();
  Caught c;
  auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  ctx.contextId = 5, ctx.deviceId = 2;
  EXPECT_FALSE(t.Translate(reinterpret_cast<CUpti_Activity*>(&ctx), &c));
  auto s = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, s.contextId = 5, s.streamId = 9, s.start = 1, s.end = 2;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&s), &c));
  ASSERT_EQ(c.gpu.size(), 1u);
  EXPECT_EQ(c.gpu[0].first.device, 2);
  EXPECT_EQ(c.gpu[0].first.stream, 9u);
  EXPECT_EQ(c.gpu[0].second, "Stream Synchronize");
}

TEST(CuptiTranslate, AStartAndItsEndAreOneRange) {
  Translator t = Make();
  Caught c;
  auto start = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START, start.id = 41, start.timestamp = 100, start.name = "forward";
  start.domain = "megatron", start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD, start.objectId.pt.threadId = 12;
  EXPECT_FALSE(t.Translate(reinterpret_cast<CUpti_Activity*>(&start), &c));
  EXPECT_EQ(t.open_ranges(), 1u);
  auto end = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END, end.id = 41, end.timestamp = 250;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&end), &c));
  auto mark = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, mark.timestamp = 300, mark.name = "checkpoint";
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&mark), &c));
  // An END before its START (another thread's buffer came first): it waits.
  auto early_end = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  early_end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END, early_end.id = 99, early_end.timestamp = 400;
  EXPECT_FALSE(t.Translate(reinterpret_cast<CUpti_Activity*>(&early_end), &c));
  EXPECT_EQ(t.open_ranges(), 1u);
  auto late_start = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  late_start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START, late_start.id = 99, late_start.timestamp = 350;
  late_start.name = "backward", late_start.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  EXPECT_TRUE(t.Translate(reinterpret_cast<CUpti_Activity*>(&late_start), &c));
  ASSERT_EQ(c.ranges.size(), 3u);
  EXPECT_EQ(std::get<0>(c.ranges[2]).start_ns, 350);
  EXPECT_EQ(std::get<0>(c.ranges[2]).end_ns, 400);
  EXPECT_EQ(std::get<0>(c.ranges[2]).tid, -1);  // a process's marker names no thread
  EXPECT_EQ(std::get<1>(c.ranges[2]), "backward");
  const auto& [range, name, domain] = c.ranges[0];
  EXPECT_EQ(range.start_ns, 100);
  EXPECT_EQ(range.end_ns, 250);
  EXPECT_EQ(range.tid, 12);
  EXPECT_EQ(name, "forward");
  EXPECT_EQ(domain, "megatron");
  EXPECT_EQ(std::get<0>(c.ranges[1]).flags, nf::kRangeFlagMark);
  EXPECT_EQ(std::get<1>(c.ranges[1]), "checkpoint");
  EXPECT_EQ(std::get<2>(c.ranges[1]), "");
  EXPECT_EQ(t.open_ranges(), 0u);
}

}  // namespace
}  // namespace commlens::recorder::cupti

namespace commlens::recorder::cupti {
namespace {

// Without CUPTI the backend fails to start and says how to give it one; the tracer
// then records nothing of the GPU and says so in its state.
TEST(CuptiBackendTest, WithoutCuptiItFailsAndSaysWhy) {
  CuptiBackend backend("/nonexistent/libcupti.so.13");
  Caught c;
  std::string why;
  EXPECT_EQ(backend.Start(&c, &why), StartResult::kFailed);
  EXPECT_NE(why.find("CUPTI could not be loaded"), std::string::npos) << why;
  EXPECT_NE(why.find("LD_LIBRARY_PATH"), std::string::npos) << why;
  backend.Flush();  // harmless when not started
  backend.Stop();
  CuptiBackend again("/nonexistent/libcupti.so.13");  // the first let go of the process's slot
  Tracer tracer(&again);
  EXPECT_FALSE(tracer.Start());
  native_format::RecordWriter out;
  tracer.Drain(1, &out);
  EXPECT_FALSE(out.empty());  // the Tracer record that says it failed
}

}  // namespace
}  // namespace commlens::recorder::cupti
