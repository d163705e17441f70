// The analysis tables as CSV files in one folder, for pandas and spreadsheets: the same
// numbers as `analyze --json`, one row per rank, step, kernel, stream, bucket or group.
//
//   ranks.csv            per-rank time breakdown (one row per rank)
//   steps.csv            per profiler step: every rank's, and the job's mean ("mean")
//   kernels.csv          every kernel per rank, and the job's merged table ("all")
//   kernel_states.csv    time in each combination of classes, per rank and for the job
//   idle_gaps.csv        per stream: gaps by kind and the length histogram
//   collectives.csv      per (process group, op, size bucket)
//   cross_rank_groups.csv, cross_rank_ranks.csv   matched collectives: skew, waiting
//
// Times in microseconds with nanosecond decimals; percentages 0-100. Fields are quoted
// (RFC 4180) when they hold a comma, a quote or a line break.
#pragma once

#include <string>
#include <vector>

#include "exporters/export.h"

namespace commlens::exporters {

// Writes the tables into |dir| (created if missing). |written| gets the file names.
Status WriteCsv(const analysis::JobAnalysis& job, const std::string& dir,
                std::vector<std::string>* written = nullptr);

}  // namespace commlens::exporters
