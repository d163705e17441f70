// What the CUPTI tracer pays per activity on CUPTI's thread (recorder/cupti_tracer): the
// tracer's part (the name looked up, the record framed) and, where CUDA's headers are,
// the translation before it, for kernels with a job's worth of distinct names; and the
// flusher's drain per record. No GPU: CUPTI's records are built from the headers' structs.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "native_format/record_writer.h"
#include "recorder/cupti_tracer/tracer.h"
#ifdef COMMLENS_HAVE_CUPTI_HEADERS
#include <cstring>

#include "recorder/cupti_tracer/cupti_translate.h"
#endif

namespace {

using namespace commlens::recorder::cupti;
namespace nf = commlens::native_format;

// A job's kernel names: a few hundred distinct ones, as a training step launches.
std::vector<std::string> KernelNames(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    names.push_back("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
                    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, variant " +
                    std::to_string(i) + ")");
  return names;
}

class NoBackend final : public ActivityBackend {
 public:
  StartResult Start(ActivitySink*, std::string*) override { return StartResult::kTracing; }
  void Flush() override {}
  void Stop() override {}
  void SetPaused(bool) override {}
};

// The tracer's part of one kernel record, drained every 4,096 records (a flush).
void BM_TracerKernelRecord(benchmark::State& state) {
  const std::vector<std::string> names = KernelNames(300);
  NoBackend backend;
  Tracer tracer(&backend);
  tracer.Start();
  nf::RecordWriter out;
  nf::GpuActivityRecord r{};
  r.kind = static_cast<uint8_t>(nf::GpuActivityKind::kKernel);
  size_t i = 0;
  for (auto _ : state) {
    r.start_ns = static_cast<int64_t>(i) * 1000, r.end_ns = r.start_ns + 500, r.correlation = i;
    tracer.OnGpuActivity(r, names[i % names.size()]);
    if (++i % 4096 == 0) {
      tracer.Drain(0, &out);
      out.Clear();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TracerKernelRecord);

#ifdef COMMLENS_HAVE_CUPTI_HEADERS
// CUPTI's kernel record translated (the name demangled once, then looked up) and handed to
// the tracer: the whole per-kernel cost on CUPTI's thread.
void BM_TranslateAndTraceKernel(benchmark::State& state) {
  std::vector<std::string> mangled;
  for (int i = 0; i < 300; ++i) mangled.push_back("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffEEE" + std::to_string(i) + "Ev");
  NoBackend backend;
  Tracer tracer(&backend);
  tracer.Start();
  Translator translate([](bool, uint32_t) { return std::string("cudaLaunchKernel"); });
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  nf::RecordWriter out;
  size_t i = 0;
  for (auto _ : state) {
    k.start = 1'000'000 + i * 1000, k.end = k.start + 500, k.correlationId = static_cast<uint32_t>(i);
    k.name = mangled[i % mangled.size()].c_str();
    translate.Translate(reinterpret_cast<const CUpti_Activity*>(&k), &tracer);
    if (++i % 4096 == 0) {
      tracer.Drain(0, &out);
      out.Clear();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TranslateAndTraceKernel);
#endif

}  // namespace

BENCHMARK_MAIN();
