// What travels from the process that imported a rank to rank 0 in `analyze --mpi`
// (cli/mpi_job.h): not the rank's GPU activity table, the bulk of a trace, but its
// per-rank analyses (window, time and kernel breakdowns, idle gaps, which comm ops are in
// the window) and the rest of the model, which is small once the host events are gone
// (model/host_events.h). The table stays where it was imported; the two cross-rank
// analyses that look into it (why a rank was late, pipeline bubbles) ask their questions
// of it in one round (stretch_questions.h). Rank 0 then writes the same report as a
// single process that held every table.
//
// The encodings are for the processes of one job, as model/rank_trace_codec.h: a magic
// and version first, every length checked when read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/analyze.h"
#include "common/status.h"
#include "model/trace.h"

namespace commlens::analysis {

// Moves what the job-level analyses need of |rank|'s GPU table into the rank
// (RankTrace::gpu_rows_elsewhere, gpu_last_end; CommOps::launch holds the launches
// already) and empties the table: comm ops then name no activity, the string pool keeps
// only the names still used, and |analysis| (of this rank) drops its per-row lists.
void LeaveGpuTable(model::RankTrace* rank, RankAnalysis* analysis);

// Moves |a|'s times by the clock offset the job passes gave its rank (as
// passes::AlignClocks moves the model's: t - by).
void ShiftRankAnalysis(RankAnalysis* a, model::TimeNs by);

// A rank's analysis without its trace pointer and per-row lists.
void EncodeRankAnalysis(const RankAnalysis& a, std::vector<uint8_t>* out);
Result<RankAnalysis> DecodeRankAnalysis(std::span<const uint8_t> bytes);

// One owner's share of a stretch round: per rank, its file (index in the job's file
// list) and part, clock offset, the job group of each of its groups, and its questions.
struct StretchBatchItem {
  uint64_t file = 0;
  uint32_t part = 0;
  model::TimeNs offset = 0;
  std::vector<uint32_t> job_group_of;
  std::vector<StretchQuestion> questions;
};
void EncodeStretchBatch(const std::vector<StretchBatchItem>& batch, std::vector<uint8_t>* out);
Result<std::vector<StretchBatchItem>> DecodeStretchBatch(std::span<const uint8_t> bytes);
// The answers to a batch, item by item.
void EncodeStretchAnswers(const std::vector<std::vector<StretchAnswer>>& answers, std::vector<uint8_t>* out);
Result<std::vector<std::vector<StretchAnswer>>> DecodeStretchAnswers(std::span<const uint8_t> bytes);

}  // namespace commlens::analysis
