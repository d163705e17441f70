// Exporters: the trace model (and the analyses' results) written in other tools'
// formats, for the whole job at once. One folder per format:
//   perfetto/  Chrome trace JSON for ui.perfetto.dev and chrome://tracing
//   paraver/   .prv/.pcf/.row for Paraver, with .cfg views under share/paraver/
//   csv/       the analysis tables as CSV files
// Every writer streams through OutputFile (a bounded buffer, written under a temporary
// name and renamed when complete) and returns a Status naming the path on failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "common/status.h"
#include "model/trace.h"

namespace commlens::exporters {

struct ExportOptions {
  // Host detail: CPU operators and Python functions too. Without it, the host side is the
  // annotations (steps, NVTX/user ranges) and the CUDA runtime/driver calls.
  bool all_events = false;
  // Profiler step numbers to keep (empty: the whole trace). A GPU activity belongs to the
  // step whose range holds its launch; host events and annotations to the steps they overlap.
  std::vector<int64_t> steps;
};

// Which rows of each rank an export keeps (ExportOptions::steps).
class Selection {
 public:
  Selection(const model::Trace& trace, const ExportOptions& options);

  bool all() const { return all_; }
  // The rank's GPU activity |row| is kept.
  bool Gpu(size_t rank_index, uint32_t row) const;
  // A host-side range [start, end] of the rank is kept.
  bool Host(size_t rank_index, model::TimeNs start, model::TimeNs end) const;
  // The rank's communication op |row| is kept (its activity is, or its time is).
  bool Comm(size_t rank_index, uint32_t row) const;

 private:
  const model::Trace& trace_;
  bool all_ = true;
  std::vector<std::vector<model::ProfilerStep>> ranges_;  // per rank, sorted by start
};



}  // namespace commlens::exporters
