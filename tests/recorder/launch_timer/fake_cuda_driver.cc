// A stand-in for CUDA's driver library (libcuda.so.1) with the calls the launch timer makes
// (src/recorder/launch_timer/driver_events.cc), loaded by the plugin through
// COMMLENS_CUDA_DRIVER in tests without a GPU. Its GPU runs each stream's work as it is
// recorded, on a clock of its own 100 s ahead of CLOCK_REALTIME, so the plugin must
// convert: an event takes the host time of its record plus the GPU's offset, and an
// event recorded on a launch stream just after another (NCCL's launch between them)
// completes FAKE_CUDA_KERNEL_NS later (40 us unless set), the kernel's run. An event
// completes when the host clock has passed its GPU time. FAKE_CUDA_CAPTURING=1 says
// every stream is being captured into a graph; FAKE_CUDA_REFUSE=1 refuses every record.
// FakeCudaCaptureChecks counts the capture questions.
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kInvalidHandle = 400, kNotReady = 600;
constexpr int64_t kGpuAhead = 100'000'000'000;

int64_t HostNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t EnvNs(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

bool EnvOn(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

struct Gpu {
  std::mutex mu;
  std::unordered_map<void*, int64_t> event_time;  // GPU time, 0 until recorded
  std::unordered_map<void*, int64_t> last_on_stream;  // a launch stream's first record of two, or 0
  std::unordered_map<void*, bool> own_streams;        // made by cuStreamCreate: no launches on them
  std::atomic<uintptr_t> next{0x1000};
};
Gpu& TheGpu() {
  static Gpu* g = new Gpu;
  return *g;
}
int g_context = 0;  // one context; its address is the handle
std::atomic<int> g_capture_checks{0};

}  // namespace

extern "C" {

// Not CUDA's: how many times the driver was asked whether a stream is capturing (a test
// finds it with dlsym).
int FakeCudaCaptureChecks() { return g_capture_checks.load(); }

CUresult cuStreamGetCtx(void* /*stream*/, void** ctx) {
  *ctx = &g_context;
  return kSuccess;
}

CUresult cuStreamIsCapturing(void* /*stream*/, int* status) {
  g_capture_checks.fetch_add(1);
  *status = EnvOn("FAKE_CUDA_CAPTURING") ? 1 : 0;
  return kSuccess;
}

CUresult cuCtxPushCurrent_v2(void* ctx) { return ctx == &g_context ? kSuccess : kInvalidHandle; }
CUresult cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = &g_context;
  return kSuccess;
}

CUresult cuEventCreate(void** event, unsigned /*flags*/) {
  Gpu& g = TheGpu();
  void* e = reinterpret_cast<void*>(g.next.fetch_add(16));
  std::lock_guard<std::mutex> lock(g.mu);
  g.event_time[e] = 0;
  *event = e;
  return kSuccess;
}

CUresult cuEventDestroy_v2(void* event) {
  Gpu& g = TheGpu();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.event_time.erase(event) ? kSuccess : kInvalidHandle;
}

CUresult cuStreamCreate(void** stream, unsigned /*flags*/) {
  Gpu& g = TheGpu();
  *stream = reinterpret_cast<void*>(g.next.fetch_add(16));
  std::lock_guard<std::mutex> lock(g.mu);
  g.own_streams[*stream] = true;
  return kSuccess;
}

CUresult cuStreamDestroy_v2(void* /*stream*/) { return kSuccess; }

CUresult cuEventRecord(void* event, void* stream) {
  if (EnvOn("FAKE_CUDA_REFUSE")) return kInvalidValue;
  Gpu& g = TheGpu();
  const int64_t now = HostNs();
  std::lock_guard<std::mutex> lock(g.mu);
  auto e = g.event_time.find(event);
  if (e == g.event_time.end()) return kInvalidHandle;
  // The second of two records on a launch stream (a launch between them): the kernel's run.
  bool after_launch = false;
  if (!g.own_streams.count(stream)) {
    int64_t& last = g.last_on_stream[stream];
    after_launch = last != 0;
    last = after_launch ? 0 : now;
  }
  e->second = now + kGpuAhead + (after_launch ? EnvNs("FAKE_CUDA_KERNEL_NS", 40'000) : 0);
  return kSuccess;
}

CUresult cuEventQuery(void* event) {
  Gpu& g = TheGpu();
  std::lock_guard<std::mutex> lock(g.mu);
  auto e = g.event_time.find(event);
  if (e == g.event_time.end() || e->second == 0) return kInvalidHandle;
  return HostNs() + kGpuAhead >= e->second ? kSuccess : kNotReady;
}

CUresult cuEventElapsedTime(float* ms, void* from, void* to) {
  Gpu& g = TheGpu();
  std::lock_guard<std::mutex> lock(g.mu);
  auto a = g.event_time.find(from), b = g.event_time.find(to);
  if (a == g.event_time.end() || b == g.event_time.end() || a->second == 0 || b->second == 0) return kInvalidHandle;
  *ms = static_cast<float>(static_cast<double>(b->second - a->second) / 1e6);
  return kSuccess;
}

}  // extern "C"
