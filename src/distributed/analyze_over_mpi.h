// A job's traces loaded and analyzed by the processes of an MPI job (`mpirun -np N commlens
// analyze --mpi`, or srun: plain MPI_Init), for jobs of thousands of ranks. README.md
// here has the design: which process imports which file, what travels, the messages and
// their order.
//
// Every process calls AnalyzeOverMpi. Each imports its share of the files and runs the
// per-rank analyses there; rank 0 receives every rank's summary, assembles the job with
// the single-process load's code, runs the job-level analyses (asking the workers what
// only their GPU tables and files can tell) and hands the result to |hooks.report|: the
// report is byte for byte the one `commlens analyze` writes without --mpi, failures and
// exit code included.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"
#include "model/trace.h"

namespace commlens::distributed {

// What to analyze: the command line's inputs, as for a single-process load.
struct MpiJob {
  std::vector<std::string> paths;
  importers::LoadOptions load;        // its |progress| is set here
  std::vector<int64_t> steps;         // the steps asked for (--steps); empty: the warm-up rule
  analysis::AnalyzeOptions analyze;   // its |steps| and |doing_at| are set here
  // Every rank's GPU table travels to rank 0 with its summary (whatif --mpi: the replay
  // needs every activity in one process); the per-rank analyses and the import still
  // spread over the processes, and rank 0 measures GPU stretches on its own tables.
  bool whole_ranks = false;
};

// What rank 0 does with the outcome; the other processes print nothing but internal errors.
struct RankZeroHooks {
  // Shows the load's progress until the handle it returns is released; may be empty.
  std::function<std::shared_ptr<void>(const importers::LoadProgress*)> show_progress;
  // The job loaded and analyzed: writes its reports; the exit code of every process.
  std::function<int(const model::Trace&, const analysis::JobAnalysis&)> report;
  // Nothing to report: says why (|usage|: the steps asked for are not in the traces); the
  // exit code of every process.
  std::function<int(const std::string& why, bool usage)> fail;
};

// Runs on every process; the exit code for every process: rank 0's, that is what
// |hooks.report| or |hooks.fail| returned. A build without MPI calls |hooks.fail|.
int AnalyzeOverMpi(const MpiJob& job, const RankZeroHooks& hooks);

}  // namespace commlens::distributed
