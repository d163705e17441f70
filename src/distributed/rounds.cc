#include "distributed/rounds.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "distributed/host_lookup.h"

namespace commlens::distributed {

namespace {

// The answers to a batch of stretch questions (EncodeStretchAnswers), or no bytes when
// the batch is damaged or names a rank not held here (rank 0 then stops the job).
std::vector<uint8_t> AnswerStretchBatch(std::span<const uint8_t> bytes, analysis::KeptRanks* kept) {
  std::vector<uint8_t> out;
  Result<std::vector<analysis::StretchBatchItem>> batch = analysis::DecodeStretchBatch(bytes);
  if (!batch.ok()) {
    fmt::print(stderr, "commlens: internal: {}\n", batch.status().message());
    return out;
  }
  Result<std::vector<std::vector<analysis::StretchAnswer>>> answers = kept->Answer(*batch);
  if (!answers.ok()) {
    fmt::print(stderr, "commlens: internal: {}\n", answers.status().message());
    return out;
  }
  analysis::EncodeStretchAnswers(*answers, &out);
  return out;
}

// What a rank was doing, asked by rank 0, in words; empty when the question is damaged or
// the file changed.
std::vector<uint8_t> AnswerDoingAt(std::span<const uint8_t> bytes, const Plan& plan, HostEventsAgain* again) {
  DoingAtQuestion q;
  std::string answer;
  if (DecodeQuestion(bytes, &q) && q.file < plan.files.size())
    answer = again->DoingAt(plan.files[q.file], static_cast<uint32_t>(q.part), q.input_bytes, q.time);
  return std::vector<uint8_t>(answer.begin(), answer.end());
}

}  // namespace

bool ReceiveSteps(const MpiSession& mpi, RankSteps* steps) {
  bool whole = true;
  for (int polls = 0, pending = mpi.size() - 1; pending > 0;) {
    std::optional<std::vector<uint8_t>> bytes = TryReceive(MPI_ANY_SOURCE, kSteps, mpi.comm());
    if (!bytes) {
      Nap(polls++);
      continue;
    }
    polls = 0;
    whole &= DecodeSteps(*bytes, steps);
    --pending;
  }
  return whole;
}

Result<analysis::StepChoice> ShareChoice(const Result<analysis::StepChoice>& mine, const MpiSession& mpi) {
  std::vector<uint8_t> bytes;
  if (mpi.rank() == 0) bytes = EncodeChoice(mine);
  Broadcast(&bytes, mpi.comm());
  return DecodeChoice(bytes);
}

int ServeUntilExitCode(const Plan& plan, analysis::KeptRanks* kept, const MpiSession& mpi) {
  int code = 0;
  MPI_Request done;
  MPI_Ibcast(&code, 1, MPI_INT, 0, mpi.comm(), &done);
  HostEventsAgain again;
  for (int polls = 0;; ++polls) {
    int finished = 0;
    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    if (finished) return code;
    if (std::optional<std::vector<uint8_t>> batch = TryReceive(0, kStretches, mpi.comm())) {
      polls = 0;
      SendTo(0, kStretchAnswers, AnswerStretchBatch(*batch, kept), mpi.comm());
    } else if (std::optional<std::vector<uint8_t>> query = TryReceive(0, kQuery, mpi.comm())) {
      polls = 0;
      SendTo(0, kAnswer, AnswerDoingAt(*query, plan, &again), mpi.comm());
    } else {
      Nap(polls);
    }
  }
}

analysis::DoingAtLookup DoingAtOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                       const MpiSession& mpi) {
  auto again = std::make_shared<HostEventsAgain>();
  return [&plan, &file_of, &trace, &mpi, again](size_t r, model::TimeNs t) -> std::string {
    const model::RankTrace& rank = trace.ranks[r];
    const auto file = file_of.find({rank.path, rank.part});
    if (file == file_of.end()) return {};
    const int owner = static_cast<int>(plan.owner[file->second]);
    if (owner == 0) return again->DoingAt(trace, r, t);
    SendTo(owner, kQuery, EncodeQuestion({file->second, rank.part, rank.input_bytes, FileTime(trace, r, t)}),
           mpi.comm());
    std::vector<uint8_t> answer = ReceiveFrom(owner, kAnswer, mpi.comm());
    return std::string(answer.begin(), answer.end());
  };
}

analysis::AnswerStretches StretchesOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                           analysis::KeptRanks* kept, const MpiSession& mpi) {
  return [&plan, &file_of, &trace, kept, &mpi](const analysis::PerRank<analysis::StretchQuestion>& questions) {
    analysis::StretchRound round = analysis::SplitByOwner(trace, questions, [&](size_t r) {
      return static_cast<int>(plan.owner[file_of.at({trace.ranks[r].path, trace.ranks[r].part})]);
    });
    for (const auto& [owner, batch] : round.batches) {
      if (owner == 0) continue;
      std::vector<uint8_t> bytes;
      analysis::EncodeStretchBatch(batch, &bytes);
      SendTo(owner, kStretches, std::move(bytes), mpi.comm());
    }
    if (auto own = round.batches.find(0); own != round.batches.end()) {
      Result<std::vector<std::vector<analysis::StretchAnswer>>> answers = kept->Answer(own->second);
      if (!answers.ok()) Abort(answers.status().message(), mpi.comm());
      if (Status placed = round.Place(0, std::move(answers).value()); !placed.ok()) Abort(placed.message(), mpi.comm());
    }
    for (const auto& [owner, batch] : round.batches) {
      if (owner == 0) continue;
      std::vector<uint8_t> bytes = ReceiveFrom(owner, kStretchAnswers, mpi.comm());
      Result<std::vector<std::vector<analysis::StretchAnswer>>> answers = analysis::DecodeStretchAnswers(bytes);
      if (!answers.ok()) Abort(fmt::format("MPI process {}: {}", owner, answers.status().message()), mpi.comm());
      if (Status placed = round.Place(owner, std::move(answers).value()); !placed.ok())
        Abort(fmt::format("MPI process {}: {}", owner, placed.message()), mpi.comm());
    }
    return std::move(round.answers);
  };
}

}  // namespace commlens::distributed
