// The messages of `analyze --mpi` (README.md here: who sends which, in what order) and
// their bytes (common/byte_codec.h: values raw, strings and lists as a u64 count first).
// Both ends run the same build for the length of one job, so the messages carry no magic
// or version; every length is checked when read all the same.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/rank_summary.h"
#include "analysis/step_choice.h"
#include "common/status.h"
#include "importers/trace_loader.h"
#include "model/trace.h"

namespace commlens::distributed {

// MPI tags, one per kind of message.
enum Tag : int {
  // Worker to rank 0, one message per file: FileMessage; one over kChunk bytes continues
  // in kMore messages.
  kFile = 1,
  kMore = 2,
  // Rank 0 to a worker while it reports: what a rank of the worker's share was doing at a
  // moment (DoingAtQuestion); the worker answers in words.
  kQuery = 3,
  kAnswer = 4,
  // Rank 0 to a worker after the first run of the cross-rank analyses: the GPU stretch
  // questions about the ranks it holds (analysis::EncodeStretchBatch); the worker answers
  // (analysis::EncodeStretchAnswers).
  kStretches = 5,
  kStretchAnswers = 6,
  // A worker to rank 0 once its share is imported, before any summary: its ranks'
  // profiler steps (EncodeSteps, one message). Rank 0 chooses the steps the summary covers
  // from every rank's and broadcasts the choice (EncodeChoice).
  kSteps = 7,
};

// MPI counts are ints: larger messages go in pieces of this size.
inline constexpr size_t kChunk = size_t{1} << 30;

// ---- the steps: every rank's, and the choice rank 0 makes of them ----

using RankSteps = std::vector<std::vector<model::ProfilerStep>>;

// Every rank's steps in |files|: {ranks, then per rank {steps, then {number, start, end}}}.
std::vector<uint8_t> EncodeSteps(const std::vector<importers::ImportedFile>& files);
// Appends the ranks' steps to |out|; false when the bytes are damaged.
bool DecodeSteps(std::span<const uint8_t> bytes, RankSteps* out);

// {0, by user, steps, then {number, length, left out, cut}} or {1, the error}.
std::vector<uint8_t> EncodeChoice(const Result<analysis::StepChoice>& choice);
Result<analysis::StepChoice> DecodeChoice(std::span<const uint8_t> bytes);

// ---- a file's message: its ranks summarized ----

// A file imported and each of its ranks summarized (analysis::SummarizeRank).
struct SummarizedFile {
  std::string error;
  std::vector<analysis::RankSummary> ranks;
};

// The header: {file index, payload bytes}; then the payload: {error, ranks, then per rank
// {bytes, analysis::EncodeRankSummary}}.
inline constexpr size_t kFileHeader = 2 * sizeof(uint64_t);
std::vector<uint8_t> EncodeFile(uint64_t file, const SummarizedFile& f);
// The header of a file message (at least kFileHeader bytes); false when too short.
bool ReadFileHeader(std::span<const uint8_t> message, uint64_t* file, uint64_t* payload);
// The payload of file |path|'s message from process |from|; a file whose error says what
// is wrong when it is damaged.
SummarizedFile DecodeFile(std::span<const uint8_t> payload, const std::string& path, int from);

// ---- what a rank was doing: a question about a file read again ----

struct DoingAtQuestion {
  uint64_t file = 0;          // index in the plan
  uint64_t part = 0;          // the rank in the file (RankTrace::part)
  uint64_t input_bytes = 0;   // as imported (RankTrace::input_bytes): the file is unchanged
  model::TimeNs time = 0;     // on the file's own clock
};
std::vector<uint8_t> EncodeQuestion(const DoingAtQuestion& q);
bool DecodeQuestion(std::span<const uint8_t> bytes, DoingAtQuestion* q);

}  // namespace commlens::distributed
