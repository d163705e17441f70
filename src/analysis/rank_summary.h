// What travels from the process that imported a rank to rank 0 in `analyze --mpi`
// (src/distributed/): not the rank's GPU activity table, the bulk of a trace, but its
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
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "common/status.h"
#include "model/trace.h"

namespace commlens::analysis {

// A rank as it travels to rank 0: its model without the GPU table (RankTrace::
// gpu_rows_elsewhere and gpu_last_end say what the job-level analyses read of it, and
// CommOps::launch holds the launches; comm ops name no activity; the string pool keeps
// only the names still used) and its per-rank analyses without their per-row lists.
struct RankSummary {
  model::RankTrace trace;
  RankAnalysis analysis;  // |trace| null
};

// Analyzes |rank| and summarizes it; |kept| gets what answers the stretch questions
// about it later (its GPU table and names, comm ops and groups, path and part). |whole|:
// the summary keeps the GPU table (whatif --mpi: rank 0 replays every activity), |kept|
// gets nothing.
RankSummary SummarizeRank(model::RankTrace rank, const AnalyzeOptions& options, model::RankTrace* kept,
                          bool whole = false);

void EncodeRankSummary(const RankSummary& s, std::vector<uint8_t>* out);
Result<RankSummary> DecodeRankSummary(std::span<const uint8_t> bytes);

// Moves |a|'s times by the clock offset the job passes gave its rank (as
// passes::AlignClocks moves the model's: t - by).
void ShiftRankAnalysis(RankAnalysis* a, model::TimeNs by);

// Which rank of which file: RankTrace::path and part.
using RankKey = std::pair<std::string, uint32_t>;

// Rank 0, once the job is assembled from summaries: each rank's analysis, taken out of
// |analyses| and moved onto the job's clock; in Trace::ranks order.
Result<std::vector<RankAnalysis>> PlaceRankAnalyses(const model::Trace& trace, std::map<RankKey, RankAnalysis>* analyses);

// A rank's analysis without its trace pointer and per-row lists.
void EncodeRankAnalysis(const RankAnalysis& a, std::vector<uint8_t>* out);
Result<RankAnalysis> DecodeRankAnalysis(std::span<const uint8_t> bytes);

// One owner's share of a stretch round: per rank, its path and part, clock offset, the
// job group of each of its groups, and its questions.
struct StretchBatchItem {
  std::string path;
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

// Rank 0: a round's questions as one batch per owner of the ranks' tables.
struct StretchRound {
  std::map<int, std::vector<StretchBatchItem>> batches;  // by owner
  std::map<int, std::vector<size_t>> ranks;              // the rank index of each item
  PerRank<StretchAnswer> answers;                        // filled by Place
  // Puts |owner|'s answers in |answers|; an error when they do not fit its batch.
  Status Place(int owner, std::vector<std::vector<StretchAnswer>> answers);
};
StretchRound SplitByOwner(const model::Trace& trace, const PerRank<StretchQuestion>& questions,
                          const std::function<int(size_t rank_index)>& owner_of);

// Where ranks were imported: their whole models, kept to answer stretch questions.
// Keep is safe from several threads at once.
class KeptRanks {
 public:
  void Keep(model::RankTrace rank);
  // The answers to a batch; a rank that is not kept here is an error.
  Result<std::vector<std::vector<StretchAnswer>>> Answer(const std::vector<StretchBatchItem>& batch);

 private:
  std::mutex mu_;
  std::map<RankKey, model::RankTrace> ranks_;
};

}  // namespace commlens::analysis
