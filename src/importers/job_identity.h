// Which job each loaded rank belongs to. A folder can hold the traces of two runs (the
// same job profiled twice, two jobs' files copied together): analyzed as one job they
// give skews of seconds, desyncs and a confident straggler, all wrong.
//
// Ranks of one job agree on the world size and on every process group they both define
// (size, members, description), and their traces overlap in time (within kSlack: hosts'
// clocks differ by far less). A rank that fits a job whose rank number it would repeat is
// a duplicate of that job's rank (the loader keeps the first); one that fits no job starts
// another. docs/analysis.md, "One job, whole".
#pragma once

#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::importers {

struct JobMember {
  const model::RankTrace* rank = nullptr;
  size_t file = 0;  // index in the inputs
};

struct JobOfRanks {
  std::vector<size_t> members;     // indices into the members given, in the order given
  std::vector<size_t> duplicates;  // of those, the ones whose rank number the job already had
  model::TimeNs first = 0, last = 0;
};

// The first and last time a rank's trace holds (GPU activities, comm ops, steps, host
// events), on its own clock; {kNoTime, kNoTime} when it holds none.
std::pair<model::TimeNs, model::TimeNs> TraceSpan(const model::RankTrace& rank);

// The jobs among |members| (each rank's number set, or -1 when unknown: those fit any job
// and never repeat a number). One job for every consistent set of inputs.
std::vector<JobOfRanks> SplitJobs(const std::vector<JobMember>& members);

// "job 1: 4 ranks (0-3) of world size 4, groups 0 (default_pg); from 2026-10-02 11:37:06
// UTC for 47.3 ms; rank0.json.gz, rank1.json.gz and 2 more" for each job.
std::string DescribeJobs(const std::vector<JobOfRanks>& jobs, const std::vector<JobMember>& members,
                         const std::vector<std::string>& files);

}  // namespace commlens::importers
