// The Nsight Systems importer against the Kineto importer on the same job, one thread, in
// one run: each reads one rank's file from disk into the trace model, as the loader does
// (nsys: SQLite queries over the export; Kineto: the streaming reader, 2 MB windows).
// Every file is measured plain and gzipped: a gzipped export is inflated to a temporary
// file by the importer, inside the timing; a gzipped Kineto trace is gunzipped on the fly.
//
// Beside each import, the finishing passes on its rows (passes::FinishRank: sort, classify,
// link launches, number, nest, steps), whose cost also depends on the format's rows.
//
// Counters, per import case:
//   bytes_per_second  decoded input (the .sqlite or .json, whether read plain or gzipped)
//   events_per_s      model rows the import made per second: GPU activities + host events +
//                     annotations + CommOps rows, summed over the ranks of the file
//   events, model_MB, model_bytes_per_event   the same rows, and the model's memory
//
//   build/benchmarks/importers/nsys_import_benchmark [--job=NAME:NSYS_EXPORT:KINETO_TRACE]...
//   (default: the moe and ddp jobs of examples/traces/nsys-1gpu, ".gz" files inflated once
//   to $TMPDIR for the plain cases; a plain file given in --job is measured plain only)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "importers/common/chunked_source.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/nsys/nsys_importer.h"
#include "passes/finish.h"

namespace {

namespace fs = std::filesystem;
using commlens::Result;
using commlens::model::RankTrace;

enum class Format { kNsys, kKineto };

// One timed import: a file of one format, plain or gzipped.
struct Case {
  std::string job;
  Format format;
  std::string path;
  bool gzipped = false;
  uint64_t decoded_bytes = 0;  // the plain file's size
};

struct Job {
  std::string name, nsys, kineto;
};

std::vector<Job> DefaultJobs() {
  const std::string dir = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/nsys-1gpu/";
  std::vector<Job> jobs;
  for (const char* name : {"moe", "ddp"})
    jobs.push_back({name, dir + name + "/rank0.sqlite.gz", dir + "kineto/" + name + "/rank0.json.gz"});
  return jobs;
}

bool IsGzip(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

// Inflates |path| to |out|.
commlens::Status InflateTo(const std::string& path, const std::string& out) {
  auto in = commlens::importers::ChunkedSource::Open(path);
  if (!in.ok()) return in.status();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(out.c_str(), "wb"), &std::fclose);
  if (!f) return commlens::Error("cannot write " + out);
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto n = in->Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return commlens::OkStatus();
    if (std::fwrite(buf.data(), 1, *n, f.get()) != *n) return commlens::Error("cannot write " + out);
  }
}

// The cases of one file: plain (inflated once into |tmp| when gzipped), and gzipped.
commlens::Status AddCases(const std::string& job, Format format, const std::string& path, const fs::path& tmp,
                          std::vector<Case>* cases) {
  std::string plain = path;
  if (IsGzip(path)) {
    plain = (tmp / (job + (format == Format::kNsys ? ".sqlite" : ".json"))).string();
    if (auto st = InflateTo(path, plain); !st.ok()) return st;
  }
  std::error_code ec;
  const uint64_t decoded = fs::file_size(plain, ec);
  if (ec) return commlens::Error(plain + ": " + ec.message());
  cases->push_back({job, format, plain, false, decoded});
  if (IsGzip(path)) cases->push_back({job, format, path, true, decoded});
  return commlens::OkStatus();
}

Result<std::vector<RankTrace>> Import(const Case& c) {
  if (c.format == Format::kNsys) return commlens::importers::ImportNsysExport(c.path);
  auto r = commlens::importers::StreamKinetoTrace(c.path);
  if (!r.ok()) return r.status();
  std::vector<RankTrace> ranks;
  ranks.push_back(std::move(r).value());
  return ranks;
}

// The rows an import made: GPU activities, host events, annotations and CommOps.
uint64_t EventRows(const std::vector<RankTrace>& ranks) {
  uint64_t rows = 0;
  for (const RankTrace& r : ranks) rows += r.gpu.size() + r.host.size() + r.annotations.size() + r.comms.size();
  return rows;
}

void BM_Import(benchmark::State& state, const Case& c) {
  uint64_t rows = 0, model_bytes = 0;
  for (auto _ : state) {
    auto ranks = Import(c);
    if (!ranks.ok()) {
      state.SkipWithError(ranks.status().message().c_str());
      return;
    }
    rows = EventRows(*ranks);
    model_bytes = 0;
    for (const RankTrace& r : *ranks) model_bytes += r.MemoryBytes();
  }
  state.SetBytesProcessed(static_cast<int64_t>(c.decoded_bytes) * state.iterations());
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events"] = static_cast<double>(rows);
  state.counters["model_MB"] = static_cast<double>(model_bytes) / 1e6;
  state.counters["model_bytes_per_event"] = rows ? static_cast<double>(model_bytes) / static_cast<double>(rows) : 0.0;
}

// The finishing passes on freshly imported rows (the import itself is not timed).
void BM_Finish(benchmark::State& state, const Case& c) {
  uint64_t rows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto ranks = Import(c);
    if (!ranks.ok()) {
      state.SkipWithError(ranks.status().message().c_str());
      return;
    }
    state.ResumeTiming();
    for (RankTrace& r : *ranks) commlens::passes::FinishRank(&r);
    state.PauseTiming();
    rows = EventRows(*ranks);
    { std::vector<RankTrace> freed = std::move(ranks).value(); }  // outside the timing
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(c.decoded_bytes) * state.iterations());
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
}

// --job=NAME:NSYS_EXPORT:KINETO_TRACE, repeated; the shipped jobs when none is given.
commlens::Result<std::vector<Job>> ParseJobs(int argc, char** argv) {
  std::vector<Job> jobs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--job=", 0) != 0) continue;
    const size_t c1 = a.find(':', 6), c2 = c1 == std::string::npos ? c1 : a.find(':', c1 + 1);
    if (c2 == std::string::npos) return commlens::Error("--job=NAME:NSYS_EXPORT:KINETO_TRACE, got " + a);
    jobs.push_back({a.substr(6, c1 - 6), a.substr(c1 + 1, c2 - c1 - 1), a.substr(c2 + 1)});
  }
  if (jobs.empty()) jobs = DefaultJobs();
  return jobs;
}

void Register(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::fprintf(stderr, "%s: %s (%.1f MB decoded)\n", c.job.c_str(), c.path.c_str(),
                 static_cast<double>(c.decoded_bytes) / 1e6);
    const std::string name = std::string(c.format == Format::kNsys ? "BM_ImportNsys/" : "BM_ImportKineto/") + c.job +
                             (c.format == Format::kNsys ? "/sqlite" : "/json") + (c.gzipped ? ".gz" : "");
    benchmark::RegisterBenchmark(name.c_str(), BM_Import, c)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  for (const Case& c : cases) {
    if (c.gzipped) continue;  // the passes see the same rows
    const std::string name = std::string(c.format == Format::kNsys ? "BM_FinishNsys/" : "BM_FinishKineto/") + c.job;
    // A fixed count: the untimed import of each iteration costs more than the passes, and
    // the library would pick iterations by the timed part alone.
    const int iterations = static_cast<int>(std::clamp<uint64_t>(200'000'000 / std::max<uint64_t>(c.decoded_bytes, 1), 1, 50));
    benchmark::RegisterBenchmark(name.c_str(), BM_Finish, c)->Iterations(iterations)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto jobs = ParseJobs(argc, argv);
  if (!jobs.ok()) {
    std::fprintf(stderr, "%s\n", jobs.status().message().c_str());
    return 2;
  }
  const char* dir = std::getenv("TMPDIR");
  std::string templ = (fs::path(dir && *dir ? dir : "/tmp") / "commlens-nsys-bench-XXXXXX").string();
  if (!::mkdtemp(templ.data())) {
    std::fprintf(stderr, "cannot create a temporary folder like %s\n", templ.c_str());
    return 1;
  }
  const fs::path tmp = templ;
  std::vector<Case> cases;
  commlens::Status st;
  for (const Job& j : *jobs) {
    if (st.ok()) st = AddCases(j.name, Format::kNsys, j.nsys, tmp, &cases);
    if (st.ok()) st = AddCases(j.name, Format::kKineto, j.kineto, tmp, &cases);
  }
  if (st.ok()) {
    Register(cases);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } else {
    std::fprintf(stderr, "%s\n", st.message().c_str());
  }
  fs::remove_all(tmp);
  return st.ok() ? 0 : 1;
}
