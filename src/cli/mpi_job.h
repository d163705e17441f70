// A job's traces loaded and analyzed by the processes of an MPI job (`mpirun -np N commlens analyze
// --mpi`, or srun: plain MPI_Init), for jobs of thousands of ranks.
//
// Every process calls RunOverMpi. Rank 0 expands the inputs (importers::ExpandInputs),
// deals the files out largest first, each to the process with the fewest bytes so far
// (ties to the lower process: the same plan for the same files), and broadcasts the
// names and the plan, so every process reads the same paths. Each process imports its
// files with the loader's ImportFile (per-rank passes included) on --threads threads and
// runs the per-rank analyses there (analysis::AnalyzeRank: window, time and kernel
// breakdowns, idle gaps, which comm ops are in the window).
//
// What travels: each rank's summary (analysis/rank_summary.h): its model without the GPU
// activity table and without its host events (dropped as it is imported,
// model/host_events.h), and its per-rank analyses. A worker posts each finished file's
// summaries to rank 0 as one message and keeps the ranks' GPU tables. Rank 0 summarizes
// its own share the same way on another thread meanwhile, takes one message at a time,
// and hands the models to importers::AssembleJob, the code the single-process load runs
// (rank numbers, job groups, matching, clock alignment). The per-rank results are moved
// onto the aligned clocks, and the job-level analyses run on rank 0 over the summaries.
// Two of them look into GPU timelines (why a rank was late, pipeline bubbles): they run
// once to gather their questions, rank 0 sends each process one batch for the ranks it
// holds (kStretches) and the answers come back (kStretchAnswers), then they run again on
// the answers (analysis/stretch_questions.h). What a stopped rank was doing (the hang
// finding) reads host events: rank 0 asks the process that imported the rank, which reads
// its file again (kQuery, kAnswer). A worker, its share sent, answers until rank 0
// broadcasts the exit code. The report is byte for byte the one `commlens analyze` writes
// without --mpi, failures and exit code included.
//
// Threading: MPI is called from the main thread only (MPI_THREAD_FUNNELED). A process
// that waits polls its MPI requests with short sleeps instead of spinning in a blocking
// call, so N processes on fewer cores leave the cores to those importing. Nobody waits
// on a worker's main thread: rank 0 receives a message whenever it is ready (with shared
// memory's single copy it reads the worker's buffer itself).
#pragma once

#include <functional>
#include <string_view>

#include "analysis/analyze.h"
#include "cli/job_inputs.h"
#include "model/trace.h"

namespace commlens::cli {

// Runs on every process. On rank 0 |report| gets the loaded job and its analysis (and
// prints); other processes print nothing but errors. Returns the exit code for every
// process: rank 0's, that is |report|'s, or kExitFailed when nothing could be loaded
// (said on stderr as "commlens VERB: ..."). A build without MPI says so and returns
// kExitFailed.
int RunOverMpi(const JobInputs& inputs, const analysis::AnalyzeOptions& options, std::string_view verb, bool quiet,
               const std::function<int(const model::Trace&, const analysis::JobAnalysis&)>& report);

}  // namespace commlens::cli
