// Cost of each export format on a loaded job, against the import of the same job: the
// writers alone (trace loaded and analyzed once, outside the timing).
//
//   build/benchmarks/exporters/export_benchmark --traces=DIR   (default: the shipped ddp sample)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "analysis/analyze.h"
#include "exporters/csv/csv_writer.h"
#include "exporters/paraver/paraver_writer.h"
#include "exporters/perfetto/perfetto_writer.h"
#include "importers/trace_loader.h"

namespace {

std::string g_traces = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp";
const std::string kOut = (std::filesystem::temp_directory_path() / "commlens_export_bench").string();

struct Loaded {
  commlens::model::Trace trace;
  commlens::analysis::JobAnalysis job;
  uint64_t input_bytes = 0;
};

Loaded& Job() {
  static Loaded* loaded = [] {
    auto* l = new Loaded;
    auto t = commlens::importers::LoadTrace({g_traces}, {});
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().message().c_str());
      std::exit(1);
    }
    l->trace = std::move(t).value();
    commlens::analysis::AnalyzeOptions o;
    o.window.all_events = true;
    l->job = commlens::analysis::Analyze(l->trace, o);
    for (const auto& r : l->trace.ranks) l->input_bytes += r.input_bytes;
    return l;
  }();
  return *loaded;
}

void Report(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<int64_t>(Job().input_bytes) * state.iterations());
}

void BM_Import(benchmark::State& state) {
  for (auto _ : state) {
    auto t = commlens::importers::LoadTrace({g_traces}, {});
    benchmark::DoNotOptimize(t.ok());
  }
  Report(state);
}

void BM_ExportPerfetto(benchmark::State& state) {
  const std::string path = kOut + (state.range(0) ? ".json.gz" : ".json");
  for (auto _ : state) {
    auto s = commlens::exporters::WritePerfetto(Job().trace, path, {});
    if (!s.ok()) state.SkipWithError(s.message().c_str());
  }
  Report(state);
}

void BM_ExportParaver(benchmark::State& state) {
  for (auto _ : state) {
    auto s = commlens::exporters::WriteParaver(Job().trace, Job().job, kOut, {});
    if (!s.ok()) state.SkipWithError(s.message().c_str());
  }
  Report(state);
}

void BM_ExportCsv(benchmark::State& state) {
  for (auto _ : state) {
    auto s = commlens::exporters::WriteCsv(Job().job, kOut + "_csv");
    if (!s.ok()) state.SkipWithError(s.message().c_str());
  }
  Report(state);
}

BENCHMARK(BM_Import)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExportPerfetto)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExportParaver)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExportCsv)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--traces=", 0) == 0) g_traces = a.substr(9);
  }
  std::fprintf(stderr, "traces: %s\n", g_traces.c_str());
  benchmark::Initialize(&argc, argv);
  Job();
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
