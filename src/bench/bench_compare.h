// Two benchmark runs held against each other (`commlens report --bench RUN --baseline
// BASE`): per collective and size, each run's busbw out-of-place and in-place and the
// difference, plus the largest drop at or above a size floor, so a run can be gated on
// "no collective lost more than N% against the fabric's earlier numbers".
//
// Collectives pair by name, dtype and reduction; sizes pair exactly. What only one run
// has is listed, not compared. Differences in how the runs were made (rank count, NCCL
// version, iterations) become notes: they change the numbers without being regressions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/result.h"

namespace commlens::bench {

struct SizeComparison {
  int64_t size_bytes = 0;
  double run_busbw_oop = 0;
  double base_busbw_oop = 0;
  double run_busbw_ip = 0;
  double base_busbw_ip = 0;
  double run_time_oop_us = 0;
  double base_time_oop_us = 0;
};

struct CollectiveComparison {
  std::string name;  // with dtype and reduction: "all_reduce (float, sum)"
  std::vector<SizeComparison> rows;
  // The most negative busbw difference, (run - base) / base in %, over both placements
  // at sizes >= the floor; 0 when nothing there is lower.
  double worst_drop_pct = 0;
  int64_t worst_drop_size = 0;
  std::string worst_drop_placement;  // "out-of-place" or "in-place"
  double run_peak_busbw = 0;
  double base_peak_busbw = 0;
};

struct BenchComparison {
  int64_t min_size = 0;  // the floor for worst_drop_pct
  std::vector<CollectiveComparison> collectives;
  std::vector<std::string> only_in_run;   // collectives the baseline lacks
  std::vector<std::string> only_in_base;  // collectives the run lacks
  std::vector<std::string> notes;         // how the runs differ in setup
};

BenchComparison CompareBenchReports(const BenchReport& run, const BenchReport& base,
                                    int64_t min_size);
// (run - base) / base in %; 0 when the base is 0.
double DiffPct(double run, double base);
// The text table; the regression verdict line when |tolerance_pct| >= 0.
std::string FormatComparison(const BenchComparison& comparison, double tolerance_pct);
// True when some collective dropped by more than |tolerance_pct| at or above the floor.
bool HasRegression(const BenchComparison& comparison, double tolerance_pct);

}  // namespace commlens::bench
