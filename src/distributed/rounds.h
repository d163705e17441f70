// The rounds of `analyze --mpi` after the plan (README.md here: the order): the steps
// (every rank's to rank 0, the choice back to all), the questions rank 0 asks the
// workers while it analyzes (GPU stretches of the ranks they hold, what a stopped rank
// was doing), and the exit code that ends every process.
#pragma once

#include <map>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/rank_summary.h"
#include "analysis/step_choice.h"
#include "analysis/stretch_questions.h"
#include "common/status.h"
#include "distributed/messages.h"
#include "distributed/plan.h"
#include "distributed/transport.h"
#include "model/trace.h"

namespace commlens::distributed {

// ---- the steps ----

// Rank 0: one kSteps message from every worker, appended to |steps| as they come; false
// when one did not decode.
bool ReceiveSteps(const MpiSession& mpi, RankSteps* steps);

// Rank 0's choice (or its error) on every process; |mine| counts on rank 0 only.
Result<analysis::StepChoice> ShareChoice(const Result<analysis::StepChoice>& mine, const MpiSession& mpi);

// ---- the questions: a worker answers ----

// A worker once its share is sent: answers rank 0's questions (kStretches, kQuery) until
// rank 0 shares the exit code (after its report, so no question comes later); that code.
int ServeUntilExitCode(const Plan& plan, analysis::KeptRanks* kept, const MpiSession& mpi);

// ---- the questions: rank 0 asks ----

// Rank 0: which file (index in the plan) each received rank came from, so which process
// holds it.
using FileOfRank = std::map<analysis::RankKey, uint64_t>;

// Rank 0's analysis::DoingAtLookup: a rank of its own share is read again here, another
// process's is asked of that process, one question at a time (rank 0 runs the analyses
// on its main thread, the one that calls MPI). The arguments must outlive it.
analysis::DoingAtLookup DoingAtOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                       const MpiSession& mpi);

// Rank 0's analysis::AnswerStretches: one batch to each process for the ranks it holds
// (all sent before any answer is awaited, so the processes answer at once); rank 0's own
// from |kept|. A batch or answer that does not decode stops the job (Abort). The
// arguments must outlive it.
analysis::AnswerStretches StretchesOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                           analysis::KeptRanks* kept, const MpiSession& mpi);

}  // namespace commlens::distributed
