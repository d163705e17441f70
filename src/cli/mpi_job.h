// A job's traces loaded by the processes of an MPI job (`mpirun -np N commlens analyze
// --mpi`, or srun: plain MPI_Init), for jobs of thousands of ranks.
//
// Every process calls RunOverMpi. Rank 0 expands the inputs (importers::ExpandInputs),
// deals the files out largest first, each to the process with the fewest bytes so far
// (ties to the lower process: the same plan for the same files), and broadcasts the
// names and the plan, so every process reads the same paths. Each process imports its
// files with the loader's ImportFile (per-rank passes included) on --threads threads. A
// worker encodes each finished file (model/rank_trace_codec.h) and posts it to rank 0 as
// one message; it holds the files its threads are importing plus a few encoded ones.
// Rank 0 imports its own share on another thread meanwhile, takes one message at a time
// (so it holds the decoded models plus one message), puts every file in its slot, and
// hands them to importers::AssembleJob, the code the single-process load runs: the report
// is byte for byte the one `commlens analyze` writes without --mpi, failures and exit
// code included.
//
// Threading: MPI is called from the main thread only (MPI_THREAD_FUNNELED). A process
// that waits polls its MPI requests with short sleeps instead of spinning in a blocking
// call, so N processes on fewer cores leave the cores to those importing. Nobody waits
// on a worker's main thread: rank 0 receives a message whenever it is ready (with shared
// memory's single copy it reads the worker's buffer itself).
//
// What travels: each rank as analyze keeps it, without its host events (dropped as it is
// imported, model/host_events.h), so rank 0 holds the GPU activities, collectives, steps
// and counters of every rank, not their host events. The one analysis that reads host
// events of another moment (what a stopped rank was doing, the hang finding) asks the
// process that imported the rank, which reads its file again and answers: rank 0 asks
// while it reports, one question at a time (kQuery, kAnswer); a worker, its share sent,
// answers until rank 0 broadcasts the exit code. Limit: rank 0 still holds every rank's
// GPU and collective tables (docs/performance.md).
#pragma once

#include <functional>
#include <string_view>

#include "analysis/cross_rank.h"
#include "cli/job_inputs.h"
#include "model/trace.h"

namespace commlens::cli {

// Runs on every process. On rank 0 |report| gets the loaded job (and prints); other
// processes print nothing but errors. Returns the exit code for every process: rank 0's,
// that is |report|'s, or kExitFailed when nothing could be loaded (said on stderr as
// "commlens VERB: ..."). A build without MPI says so and returns kExitFailed.
int RunOverMpi(const JobInputs& inputs, std::string_view verb, bool quiet,
               const std::function<int(const model::Trace&, const analysis::DoingAtLookup&)>& report);

}  // namespace commlens::cli
