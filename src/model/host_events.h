// What `commlens analyze` keeps of a rank's host side. Of the host events, annotations
// and flows, the analyses read only the ProfilerStep#N ranges (the analysis window,
// analysis/window.h), where the trace ends (the hang finding), and, for a rank that
// stopped, what its host was doing at one moment (analysis::DoingAt). In a Kineto trace
// they are most of the events (about 7 host events per GPU activity in the DDP sample), so
// a job of thousands of ranks is analyzed without them: DropHostEvents runs as each rank
// is imported (in every process of `analyze --mpi`, before the rank is sent to rank 0),
// and the rare question about a moment goes back to the file (distributed/host_lookup.h).
#pragma once

#include "model/trace.h"

namespace commlens::model {

// Leaves out host events, annotations and flows but the ProfilerStep#N ranges (host and
// annotation tables), a pipeline schedule's host action ranges ("PP:..."), and the first
// host event that ends last, in their order; counts what
// was left out of those two tables in |host_events_dropped|; keeps only the strings the
// tables still name (string ids change, the strings they name do not). Everything else
// is untouched.
void DropHostEvents(RankTrace* rank);

// Rebuilds |rank|'s string pool from the strings its tables name, in one block of their
// size; the ids change, the strings they name do not. |from|: the pool the tables' ids
// refer to, when it is not the rank's own.
void KeepNamedStrings(RankTrace* rank);
void KeepNamedStrings(RankTrace* rank, const StringPool& from);

}  // namespace commlens::model
