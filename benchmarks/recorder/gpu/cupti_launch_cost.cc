// What CUPTI adds to each CUDA launch on the host, by itself and through our tracer (issue
// 28): the host time of a loop of launches, in a process of its own per setting (CUPTI
// is set up once per process). scripts/device/cupti_launch_cost.sh runs the settings in
// turns on the GPU machine; docs/performance.md has the figures.
//
//   cupti_launch_cost <setting> <loop> [iterations]
//   setting: none | bare | bare-zeroed | bare-shared | ours-kernel | ours-default | events
//     none          no CUPTI
//     bare          a minimal CUPTI client: kernels traced, buffers handed back unread
//     bare-zeroed   the same, its buffers given zeroed (CUPTI need not clear them)
//     bare-shared   the same, one activity buffer for all threads (CUPTI's default is one
//                   a thread)
//     ours-kernel   commlens's tracer (recorder/cupti_tracer), kernels only
//     ours-default  commlens's tracer, its default kinds (kernels, copies, sets, syncs, NVTX)
//     events        no CUPTI: every launch timed by the launch timer (recorder/launch_timer), a
//                   CUDA event just before and just after it, collected every 10 ms by
//                   another thread as the recorder's flusher does; the timer asks the driver
//                   whether the stream is capturing
//     events-known  the same, told the launch is not captured (as NCCL tells the plugin of
//                   its call's group): no capture question
//   loop: launch (launches alone) | mixed (each launch with the calls a framework makes
//         around one: the device asked, an event recorded and queried) | cold (each launch
//         after 2 MiB of other memory read, as a training step's other work leaves the
//         caches between NCCL's launches; only the launch and its timing are timed, so
//         ns_per_iteration is theirs alone)
//
// Prints one JSON line: {"setting":..,"loop":..,"ns_per_iteration":..,"records":..}.
#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <thread>

#include "recorder/cupti_tracer/cupti_backend.h"
#include "recorder/cupti_tracer/cupti_kinds.h"
#include "recorder/launch_timer/driver_events.h"
#include "recorder/launch_timer/launch_timer.h"

// empty_kernel.cu: an empty kernel launched on |stream| (nvcc compiles C++17 only).
void LaunchEmptyKernel(cudaStream_t stream);

namespace {

std::atomic<uint64_t> g_records{0};
bool g_zeroed = false;
constexpr size_t kBareBuffer = 8u << 20;

void CUPTIAPI BareRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(g_zeroed ? std::calloc(1, kBareBuffer) : std::aligned_alloc(8, kBareBuffer));
  *size = kBareBuffer;
  *max_records = 0;
}

void CUPTIAPI BareCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  g_records += valid / 200;  // about: the point is not to read them
  std::free(buffer);
}

// The minimal client, through dlopen as the tracer loads CUPTI.
bool StartBare(bool zeroed, bool shared) {
  void* h = dlopen("libcupti.so.13", RTLD_NOW);
  if (!h) h = dlopen("libcupti.so", RTLD_NOW);
  if (!h) return false;
  auto set_attr = reinterpret_cast<decltype(&cuptiActivitySetAttribute)>(dlsym(h, "cuptiActivitySetAttribute"));
  auto reg = reinterpret_cast<decltype(&cuptiActivityRegisterCallbacks)>(dlsym(h, "cuptiActivityRegisterCallbacks"));
  auto enable = reinterpret_cast<decltype(&cuptiActivityEnable)>(dlsym(h, "cuptiActivityEnable"));
  if (!set_attr || !reg || !enable) return false;
  g_zeroed = zeroed;
  if (zeroed) {
    uint8_t one = 1;
    size_t n = sizeof(one);
    set_attr(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &n, &one);
  }
  if (shared) {
    uint8_t zero = 0;
    size_t n = sizeof(zero);
    set_attr(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &n, &zero);
  }
  return reg(&BareRequested, &BareCompleted) == CUPTI_SUCCESS &&
         enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

class CountingSink final : public commlens::recorder::cupti::ActivitySink {
 public:
  void OnGpuActivity(const commlens::native_format::GpuActivityRecord&, std::string_view) override { ++g_records; }
  void OnCudaApi(const commlens::native_format::CudaApiRecord&, std::string_view) override { ++g_records; }
  void OnRange(const commlens::native_format::RangeRecord&, std::string_view, std::string_view) override {
    ++g_records;
  }
  void OnDropped(uint64_t) override {}
};

int Fail(const char* what) {
  std::fprintf(stderr, "cupti_launch_cost: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Fail("usage: cupti_launch_cost <setting> <launch|mixed|cold> [iterations]");
  const std::string_view setting = argv[1], loop = argv[2];
  const long iterations = argc > 3 ? std::atol(argv[3]) : 200000;
  if (loop != "launch" && loop != "mixed" && loop != "cold") return Fail("loop: launch, mixed or cold");
  if (cudaFree(nullptr) != cudaSuccess) return Fail("no GPU");
  CountingSink sink;
  commlens::recorder::cupti::CuptiBackend* ours = nullptr;
  if (setting == "bare" || setting == "bare-zeroed" || setting == "bare-shared") {
    if (!StartBare(setting == "bare-zeroed", setting == "bare-shared")) return Fail("CUPTI would not start");
  } else if (setting == "ours-kernel" || setting == "ours-default") {
    const uint32_t kinds = setting == "ours-kernel" ? commlens::recorder::cupti::kCuptiKernels
                                                    : commlens::recorder::cupti::kDefaultCuptiKinds;
    ours = new commlens::recorder::cupti::CuptiBackend("", kinds);
    std::string why;
    if (ours->Start(&sink, &why) != commlens::recorder::cupti::StartResult::kTracing) return Fail(why.c_str());
  } else if (setting != "none" && setting != "events" && setting != "events-known") {
    return Fail("unknown setting");
  }
  commlens::recorder::launch_timer::DriverEvents driver;
  commlens::recorder::launch_timer::LaunchTimer timer(&driver);
  const bool timed = setting == "events" || setting == "events-known";
  const auto capture = setting == "events-known" ? commlens::recorder::launch_timer::LaunchTimer::Capture::kNo
                                                 : commlens::recorder::launch_timer::LaunchTimer::Capture::kUnknown;
  std::atomic<bool> collecting{timed};
  std::thread collector;
  if (timed) {
    std::string why;
    if (!timer.Start(&why)) return Fail(why.c_str());
    collector = std::thread([&] {
      commlens::native_format::RecordWriter w;
      while (collecting) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        timer.Collect(0, &w);
        g_records += w.size() / 44;  // about: LaunchTiming records of 12 + 32 bytes
        w.Clear();
      }
    });
  }
  cudaStream_t stream;
  cudaEvent_t event;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  const bool cold = loop == "cold";
  constexpr size_t kScratch = 256u << 20, kEvict = 2u << 20;
  std::vector<char> scratch(cold ? kScratch : 0, 1);
  size_t scratch_at = 0;
  volatile char sink_byte = 0;
  // Cold: the nanoseconds spent launching (and timing) only.
  auto run = [&](long n) -> double {
    int device = 0;
    double launching_ns = 0;
    for (long i = 0; i < n; ++i) {
      if (cold) {
        char sum = 0;
        for (size_t k = 0; k < kEvict; k += 64) sum = static_cast<char>(sum + scratch[scratch_at + k]);
        sink_byte = sum;
        scratch_at = (scratch_at + kEvict) % kScratch;
      }
      const auto t0 = cold ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      const uint32_t slot = timed ? timer.Begin(reinterpret_cast<uint64_t>(stream), capture) : 0;
      LaunchEmptyKernel(stream);
      if (timed) timer.End(slot, static_cast<uint64_t>(i) + 1);
      if (cold) launching_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      if (loop == "mixed") {
        cudaGetDevice(&device);
        cudaEventRecord(event, stream);
        (void)cudaEventQuery(event);
      }
      if (i % 512 == 511) cudaStreamSynchronize(stream);  // the launch queue never fills
    }
    cudaStreamSynchronize(stream);
    return launching_ns;
  };
  run(cold ? 2000 : 20000);  // warm: modules loaded, CUPTI's buffers in place
  std::vector<double> per_iteration;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double launching_ns = run(iterations);
    const auto t1 = std::chrono::steady_clock::now();
    const double ns = cold ? launching_ns : std::chrono::duration<double, std::nano>(t1 - t0).count();
    per_iteration.push_back(ns / static_cast<double>(iterations));
    if (ours) ours->Flush();  // what the recorder's flusher does once a second
  }
  std::sort(per_iteration.begin(), per_iteration.end());
  if (ours) ours->Stop();
  if (collector.joinable()) {
    collecting = false;
    collector.join();
    if (timer.untimed() > 0) std::fprintf(stderr, "cupti_launch_cost: %llu launches untimed\n",
                                          static_cast<unsigned long long>(timer.untimed()));
  }
  std::printf("{\"setting\":\"%s\",\"loop\":\"%s\",\"ns_per_iteration\":%.1f,\"min\":%.1f,\"max\":%.1f,\"records\":%llu}\n",
              argv[1], argv[2], per_iteration[2], per_iteration.front(), per_iteration.back(),
              static_cast<unsigned long long>(g_records.load()));
  return 0;
}
