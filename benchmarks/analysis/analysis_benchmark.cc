// What the job-level analyses cost against loading the job: every analysis (per-rank map
// and job reduce) and the cross-rank part alone, on a loaded trace. The cross-rank
// benchmark also reports the heap it needs beyond the loaded job (peak bytes allocated
// during one run, counted by this binary's operator new) against the job's model and its
// matched-operations table: the analysis should need memory in proportion to the
// collectives, not to the raw events.
//
//   build/benchmarks/analysis/analysis_benchmark --traces=DIR   (default: the shipped ddp sample)
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

// Heap bytes in use and their peak, for the whole process.
namespace heap {
std::atomic<int64_t> live{0}, peak{0};
void Add(void* p) {
  const int64_t now = live.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) + static_cast<int64_t>(malloc_usable_size(p));
  int64_t top = peak.load(std::memory_order_relaxed);
  while (now > top && !peak.compare_exchange_weak(top, now)) {
  }
}
void* Alloc(size_t n, size_t align = 0) {
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  Add(p);
  return p;
}
void Free(void* p) noexcept {
  if (p == nullptr) return;
  live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace heap

void* operator new(size_t n) { return heap::Alloc(n); }
void* operator new[](size_t n) { return heap::Alloc(n); }
void* operator new(size_t n, std::align_val_t a) { return heap::Alloc(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return heap::Alloc(n, static_cast<size_t>(a)); }
void operator delete(void* p) noexcept { heap::Free(p); }
void operator delete[](void* p) noexcept { heap::Free(p); }
void operator delete(void* p, size_t) noexcept { heap::Free(p); }
void operator delete[](void* p, size_t) noexcept { heap::Free(p); }
void operator delete(void* p, std::align_val_t) noexcept { heap::Free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { heap::Free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { heap::Free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { heap::Free(p); }

#include "analysis/analyze.h"
#include "analysis/gpu_stretch.h"
#include "analysis/rank_summary.h"
#include "importers/trace_loader.h"
#include "model/rank_trace_codec.h"

namespace {

std::string g_traces = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp";

const commlens::model::Trace& Loaded() {
  static commlens::model::Trace* trace = [] {
    auto t = commlens::importers::LoadTrace({g_traces}, {});
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().message().c_str());
      std::exit(1);
    }
    return new commlens::model::Trace(std::move(t).value());
  }();
  return *trace;
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(commlens::importers::LoadTrace({g_traces}, {}).ok());
}

void BM_Analyze(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(commlens::analysis::Analyze(Loaded(), {}).ranks.size());
}

// What AnalyzeCrossRank reads beside the trace: the per-rank results it builds on.
struct CrossRankInputs {
  commlens::analysis::JobAnalysis job;
  std::vector<std::vector<uint8_t>> in_window;
  std::vector<const commlens::analysis::RankTimeBreakdown*> times;
  commlens::analysis::Arrivals arrivals;

  explicit CrossRankInputs(const commlens::model::Trace& t) : job(commlens::analysis::Analyze(t, {})) {
    for (size_t r = 0; r < t.ranks.size(); ++r) {
      in_window.push_back(commlens::analysis::OpsInWindow(t.ranks[r], job.ranks[r].window));
      times.push_back(&job.ranks[r].time);
    }
    arrivals = commlens::analysis::ComputeArrivals(t, in_window);
  }
  size_t Run(const commlens::model::Trace& t) const {
    commlens::analysis::TraceStretches gpu(t);
    return commlens::analysis::AnalyzeCrossRank(t, in_window, arrivals, times, job.cross_rank.noise, job.collectives, gpu)
        .summary.size();
  }
};

void BM_CrossRank(benchmark::State& state) {
  const auto& t = Loaded();
  const CrossRankInputs in(t);
  int64_t extra = 0;
  for (auto _ : state) {
    const int64_t before = heap::live.load();
    heap::peak.store(before);
    benchmark::DoNotOptimize(in.Run(t));
    extra = std::max(extra, heap::peak.load() - before);
  }
  uint64_t model = 0, ops = 0, events = 0;
  for (const auto& r : t.ranks) {
    model += r.MemoryBytes();
    ops += r.comms.size();
    events += r.gpu.size() + r.host.size() + r.annotations.size();
  }
  const commlens::model::MatchedOps& m = t.matched;
  const double matched_bytes = static_cast<double>(
      m.group.capacity() * sizeof(uint32_t) + m.kind.capacity() + m.seq.capacity() * sizeof(int64_t) +
      (m.sender.capacity() + m.receiver.capacity()) * sizeof(int32_t) +
      m.first.capacity() * sizeof(uint32_t) + m.rank_index.capacity() * sizeof(uint32_t) +
      m.row.capacity() * sizeof(uint32_t) + (m.start.capacity() + m.end.capacity()) * sizeof(int64_t));
  state.counters["ranks"] = static_cast<double>(t.ranks.size());
  state.counters["events"] = static_cast<double>(events);
  state.counters["comm_ops"] = static_cast<double>(ops);
  state.counters["model_MB"] = static_cast<double>(model) / 1e6;
  state.counters["matched_table_MB"] = matched_bytes / 1e6;
  state.counters["cross_rank_peak_MB"] = static_cast<double>(extra) / 1e6;
  state.counters["bytes_per_op"] = static_cast<double>(extra) / static_cast<double>(std::max<uint64_t>(ops, 1));
}

// The same job with one kernel per rank stretched over the whole run (a hung collective's
// kernel runs until the job is killed): the stretch queries must not scan every activity
// that started before them.
void BM_CrossRankWithALongKernel(benchmark::State& state) {
  static commlens::model::Trace* stretched = [] {
    auto loaded = commlens::importers::LoadTrace({g_traces}, {});
    auto* t = new commlens::model::Trace(std::move(loaded).value());
    for (auto& r : t->ranks) {
      if (r.gpu.size() == 0) continue;
      commlens::model::TimeNs last = 0;
      for (commlens::model::TimeNs e : r.gpu.end) last = std::max(last, e);
      r.gpu.end[0] = last;
    }
    return t;
  }();
  const CrossRankInputs in(*stretched);
  for (auto _ : state) benchmark::DoNotOptimize(in.Run(*stretched));
}

// What `analyze --mpi` sends rank 0 per rank: the summary (analysis/rank_summary.h)
// against the whole rank as it went before (host events dropped, GPU table included).
// Timed: summarizing and encoding, not the import.
void BM_SummarizeRank(benchmark::State& state) {
  auto files = commlens::importers::ExpandInputs({g_traces});
  if (!files.ok() || files->empty()) return state.SkipWithError("no traces");
  commlens::importers::LoadOptions load;
  load.drop_host_events = true;
  uint64_t whole = 0, summary = 0, ranks = 0, activities = 0;
  for (auto _ : state) {
    for (const std::string& path : *files) {
      state.PauseTiming();
      commlens::importers::ImportedFile f = commlens::importers::ImportOneFile(path, load);
      state.ResumeTiming();
      for (commlens::model::RankTrace& r : f.ranks) {
        std::vector<uint8_t> bytes;
        commlens::model::EncodeRankTrace(r, &bytes);
        whole += bytes.size();
        activities += r.gpu.size();
        bytes.clear();
        commlens::model::RankTrace table;
        commlens::analysis::RankSummary s = commlens::analysis::SummarizeRank(std::move(r), {}, &table);
        commlens::analysis::EncodeRankSummary(s, &bytes);
        summary += bytes.size();
        ++ranks;
      }
    }
  }
  state.counters["whole_rank_KB"] = static_cast<double>(whole) / static_cast<double>(std::max<uint64_t>(ranks, 1)) / 1e3;
  state.counters["summary_KB"] = static_cast<double>(summary) / static_cast<double>(std::max<uint64_t>(ranks, 1)) / 1e3;
  state.counters["gpu_activities"] = static_cast<double>(activities) / static_cast<double>(std::max<uint64_t>(ranks, 1));
  state.counters["whole_over_summary"] = static_cast<double>(whole) / static_cast<double>(std::max<uint64_t>(summary, 1));
}

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SummarizeRank)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CrossRankWithALongKernel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Analyze)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CrossRank)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--traces=", 0) == 0) g_traces = a.substr(9);
  }
  std::fprintf(stderr, "traces: %s\n", g_traces.c_str());
  benchmark::Initialize(&argc, argv);
  Loaded();
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
