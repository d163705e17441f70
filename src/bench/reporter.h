// The one reporter of the benchmark: it prints the nccl-tests-style table as rows
// arrive (plus p50/p99 columns and a summary line per collective) and keeps every
// result for the JSON file (bench_json.h), so the table and the JSON cannot disagree.
//
// Threading: used by the driver's single thread. Only rank 0 prints; every rank builds
// the same report (results are reduced over ranks before they reach the reporter).
#pragma once

#include <cstdio>
#include <string>

#include "bench/collective_table.h"
#include "bench/result.h"

namespace commlens::bench {

class Reporter {
 public:
  // |out| == nullptr: keep results, print nothing.
  explicit Reporter(std::FILE* out) : out_(out) {}

  void BeginRun(const RunInfo& run, const BenchConfig& config);
  void BeginCollective(const CollectiveSpec& spec, const BenchConfig& config, int nranks,
                       Backend backend = Backend::kNccl);
  void AddRow(const SizeResult& row);
  void EndCollective();
  void EndRun(std::string end_time);

  const BenchReport& report() const { return report_; }

 private:
  void Print(const std::string& text);

  std::FILE* out_;
  BenchReport report_;
};

// The pieces of the table, exposed for golden tests.
std::string FormatRunHeader(const RunInfo& run, const BenchConfig& config);
std::string FormatTableHeader(const CollectiveResult& collective, int nranks);
std::string FormatRow(const CollectiveResult& collective, const SizeResult& row);
std::string FormatSummary(const CollectiveResult& collective);
std::string FormatFooter(const BenchReport& report);
// When one collective ran on several backends: its sizes, one busbw and p50 column pair
// per backend, and the best backend per size; empty otherwise.
std::string FormatBackendComparison(const BenchReport& report);
// The whole table of a finished run, as the reporter printed it (`commlens report --bench`).
std::string FormatReport(const BenchReport& report);

}  // namespace commlens::bench
