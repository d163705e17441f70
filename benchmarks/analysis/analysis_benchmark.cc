// What the job-level analyses cost against loading the job: every analysis (per-rank map
// and job reduce) and the cross-rank part alone, on a loaded trace.
//
//   build/benchmarks/analysis/analysis_benchmark --traces=DIR   (default: the shipped ddp sample)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"

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

void BM_CrossRank(benchmark::State& state) {
  const auto& t = Loaded();
  commlens::analysis::JobAnalysis job = commlens::analysis::Analyze(t, {});
  std::vector<std::vector<uint8_t>> in_window;
  std::vector<const commlens::analysis::RankTimeBreakdown*> times;
  for (size_t r = 0; r < t.ranks.size(); ++r) {
    in_window.push_back(commlens::analysis::OpsInWindow(t.ranks[r], job.ranks[r].window));
    times.push_back(&job.ranks[r].time);
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(commlens::analysis::AnalyzeCrossRank(t, in_window, times, job.collectives).summary.size());
}

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->UseRealTime();
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
