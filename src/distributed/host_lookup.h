// analyze drops each rank's host events as it is imported (model/host_events.h). The one
// question left for them, what a rank that stopped was doing when the others went on
// (analysis::DoingAt, the hang finding), is answered from the rank's file, read again:
// rare (a hang's stopped ranks only) and exact (the same model as before the drop).
// Where the file was imported: in the one process of `analyze`, or, under --mpi, in the
// process that holds the rank (rank 0 asks it: rounds.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/cross_rank.h"
#include "model/trace.h"

namespace commlens::distributed {

// Rank |part| of a file read again; the last file read is kept (a hang asks about its
// stopped ranks in turn, often the same one).
class HostEventsAgain {
 public:
  // analysis::DoingAt on rank |part| of |path| at |file_time| (that file's own clock);
  // empty when the file cannot be read again, or no longer decodes to |input_bytes| (it
  // changed since it was imported).
  std::string DoingAt(const std::string& path, uint32_t part, uint64_t input_bytes, model::TimeNs file_time);
  // The same for rank |rank_index| of |trace| at |t| on the job's clock.
  std::string DoingAt(const model::Trace& trace, size_t rank_index, model::TimeNs t);

 private:
  std::string path_;
  std::vector<model::RankTrace> ranks_;
};

// |t| on the job's clock as rank |rank_index|'s file has it: before the clock alignment
// (Trace::clock) moved its times.
model::TimeNs FileTime(const model::Trace& trace, size_t rank_index, model::TimeNs t);

// analysis::DoingAtLookup for a job loaded in this process.
analysis::DoingAtLookup DoingAtFromFiles(const model::Trace& trace);

}  // namespace commlens::distributed
