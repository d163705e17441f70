// Per-stage cost of analyzing one rank's Kineto trace, single-threaded: gunzip, JSON
// parse into the trace model's rows (whole-file, and streamed from the file as the loader
// does it), the finishing passes, and the analyses. Throughput is reported in MB/s
// of decoded JSON per core.
//
//   build/benchmarks/importers/import_benchmark [--trace=FILE]   (default: the large
//   benchmark trace of rank 0 when present, else the shipped DDP sample)
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "importers/common/chunked_source.h"
#include "importers/common/gzip_inflater.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "passes/finish.h"

namespace {

std::string g_trace;

std::string DefaultTrace() {
  std::string large = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/large/rank0.json.gz";
  if (std::filesystem::exists(large)) return large;
  return std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp/rank0.json.gz";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A rank's appended rows as an importer leaves them, for timing the passes again.
commlens::model::RankTrace CopyRows(const commlens::model::RankTrace& r) {
  commlens::model::RankTrace c;
  c.gpu = r.gpu;
  c.host = r.host;
  c.annotations = r.annotations;
  c.comms = r.comms;
  c.groups = r.groups;
  for (size_t i = 0; i < r.strings.size(); ++i) c.strings.Intern(r.strings.Get(commlens::model::StringId{static_cast<uint32_t>(i)}));
  return c;
}

void BM_Gunzip(benchmark::State& state) {
  std::string raw = ReadAll(g_trace);
  size_t decoded = 0;
  for (auto _ : state) {
    auto f = commlens::importers::DecodeInput(raw, g_trace);
    if (!f.ok()) state.SkipWithError(f.status().message().c_str());
    decoded = f->buffer.size();
    benchmark::DoNotOptimize(f->buffer.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(decoded) * state.iterations());
}

// The streaming reader's decoder (common/gzip_inflater.h: ISA-L where the build found
// it, else zlib), from memory into one reused 2 MB window, as the importer reads.
void BM_InflateChunked(benchmark::State& state) {
  std::string raw = ReadAll(g_trace);
  std::vector<char> window(2 << 20);
  uint64_t decoded = 0;
  for (auto _ : state) {
    auto source = commlens::importers::ChunkedSource::FromMemory(raw, g_trace);
    if (!source.ok()) {
      state.SkipWithError(source.status().message().c_str());
      return;
    }
    while (true) {
      auto got = source->Read(window.data(), window.size());
      if (!got.ok()) {
        state.SkipWithError(got.status().message().c_str());
        return;
      }
      if (*got == 0) break;
    }
    decoded = source->decoded_bytes();
  }
  state.SetBytesProcessed(static_cast<int64_t>(decoded) * state.iterations());
  state.SetLabel(commlens::importers::GzipInflater::Engine());
}

void BM_ParseKineto(benchmark::State& state) {
  auto f = commlens::importers::ReadInputFile(g_trace);
  if (!f.ok()) {
    state.SkipWithError(f.status().message().c_str());
    return;
  }
  size_t events = 0;
  for (auto _ : state) {
    auto r = commlens::importers::ImportKinetoTrace(f->buffer, g_trace);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    events = r->gpu.size() + r->host.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(f->buffer.size()) * state.iterations());
  state.counters["events"] = static_cast<double>(events);
  auto r = commlens::importers::ImportKinetoTrace(f->buffer, g_trace);
  const double rows = static_cast<double>(r->gpu.size() + r->host.size() + r->annotations.size() + r->flows.size());
  state.counters["model_MB"] = static_cast<double>(r->MemoryBytes()) / 1e6;
  state.counters["model_bytes_per_event"] = static_cast<double>(r->MemoryBytes()) / rows;
}

// The file as the loader imports it: read, gunzipped and parsed in bounded windows
// (arg: window KiB), one pass, no whole-file buffer.
// The ceiling: simdjson's on-demand parser alone over the decoded document, touching
// ts, dur, name and cat of every event (the fields every reader needs), nothing stored.
// The same method as shared/reference/parse-ceiling.md; the compiler's target flavour.
void BM_SimdjsonCeiling(benchmark::State& state) {
  auto f = commlens::importers::ReadInputFile(g_trace);
  if (!f.ok()) {
    state.SkipWithError(f.status().message().c_str());
    return;
  }
  simdjson::ondemand::parser parser;
  uint64_t touched = 0;
  for (auto _ : state) {
    simdjson::padded_string_view json(f->buffer.data(), f->buffer.size(), f->buffer.capacity());
    simdjson::ondemand::document doc = parser.iterate(json);
    for (auto event : doc["traceEvents"].get_array()) {
      simdjson::ondemand::object o = event.get_object();
      for (auto field : o) {
        std::string_view key = field.unescaped_key();
        if (key == "ts" || key == "dur") touched += std::string_view(field.value().raw_json_token()).size();
        else if (key == "name" || key == "cat") touched += std::string_view(field.value().get_string()).size();
      }
    }
  }
  benchmark::DoNotOptimize(touched);
  state.SetBytesProcessed(static_cast<int64_t>(f->buffer.size()) * state.iterations());
}

void BM_StreamKineto(benchmark::State& state) {
  commlens::importers::KinetoStreamOptions options;
  options.window_bytes = static_cast<size_t>(state.range(0)) << 10;
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto r = commlens::importers::StreamKinetoTrace(g_trace, options);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    bytes = r->input_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}

void BM_FinishRank(benchmark::State& state) {
  auto f = commlens::importers::ReadInputFile(g_trace);
  auto r = commlens::importers::ImportKinetoTrace(f->buffer, g_trace);
  for (auto _ : state) {
    state.PauseTiming();
    commlens::model::RankTrace copy = CopyRows(*r);
    state.ResumeTiming();
    commlens::passes::FinishRank(&copy);
    benchmark::DoNotOptimize(copy.steps.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(f->buffer.size()) * state.iterations());
}

void BM_AnalyzeRank(benchmark::State& state) {
  auto f = commlens::importers::ReadInputFile(g_trace);
  auto r = commlens::importers::ImportKinetoTrace(f->buffer, g_trace);
  commlens::passes::FinishRank(&r.value());
  commlens::model::Trace trace;
  trace.ranks.push_back(std::move(r).value());
  commlens::passes::FinishJob(&trace);
  commlens::analysis::AnalyzeOptions options;
  options.threads = 1;
  for (auto _ : state) {
    auto job = commlens::analysis::Analyze(trace, options);
    benchmark::DoNotOptimize(job.ranks.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(f->buffer.size()) * state.iterations());
}

BENCHMARK(BM_Gunzip)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimdjsonCeiling)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_InflateChunked)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseKineto)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StreamKineto)->Arg(256)->Arg(1024)->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FinishRank)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeRank)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  g_trace = DefaultTrace();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--trace=", 0) == 0) g_trace = a.substr(8);
  }
  std::fprintf(stderr, "trace: %s\n", g_trace.c_str());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
