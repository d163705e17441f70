// The finishing passes: importers only append rows; these turn the rows of any format
// into the model the analyses and exporters read, the same way for every format.
//
//   per rank (FinishRank, run by the loader on the importer's thread):
//     sort_activities   GPU activities in start order (comm rows follow their activity)
//     classify          compute / communication / memory / other per activity; a
//                       communication kernel without a CommOps row gets one
//     link_launches     each activity's launching host call, by correlation id
//     number_ops        sequence numbers for ops the source did not number: collectives
//                       per group, p2p messages per (group, direction, peer), in launch order
//     nest_annotations  nesting depth of annotation ranges per thread
//     find_steps        ProfilerStep#N ranges, sorted
//   per job (FinishJob, once every rank is loaded and numbered):
//     job_groups        the job's process groups; ProcessGroup::job_group
//     match_ops         the matched-operations table (model::MatchedOps)
//     align_clocks      clock offsets between hosts (or ranks) from matched collectives,
//                       applied to every time; the table is rebuilt (model::ClockAlignment)
//
// Order matters: classify needs sorted rows, number_ops needs launches, match_ops needs
// job groups and final rank numbers. Docs: docs/analysis.md, "The model and the passes".
#pragma once

#include "model/trace.h"

namespace commlens::passes {

void FinishRank(model::RankTrace* rank);
struct JobOptions {
  model::AlignMode align = model::AlignMode::kAuto;
};

void FinishJob(model::Trace* trace, const JobOptions& options = {});

}  // namespace commlens::passes
