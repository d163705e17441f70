// The two sides of `analyze --mpi`: a worker imports its share, sends its ranks' steps,
// then each file's summaries, and answers questions; rank 0 imports its own share while
// the steps come in, chooses the steps, gathers every summary, assembles the job and
// analyzes it. README.md here has the order of the messages.
#include "distributed/analyze_over_mpi.h"

#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

#include "analysis/rank_summary.h"
#include "common/file.h"
#include "common/parallel_for.h"
#include "distributed/messages.h"
#include "distributed/outbox.h"
#include "distributed/plan.h"
#include "distributed/rounds.h"
#include "distributed/transport.h"
#include "importers/trace_loader.h"

namespace commlens::distributed {

namespace {

using importers::ImportedFile;

// Rank 0 expands the inputs and deals the files; every process gets the same plan.
Plan SharePlan(const std::vector<std::string>& inputs, const MpiSession& mpi) {
  std::vector<uint8_t> bytes;
  std::vector<std::string> skipped;
  if (mpi.rank() == 0) {
    Plan plan;
    if (Result<std::vector<std::string>> files = importers::ExpandInputs(inputs, &skipped); !files.ok()) {
      plan.error = files.status().message();
    } else {
      std::vector<uint64_t> sizes;
      for (const std::string& f : *files) sizes.push_back(importers::InputFileSize(f));
      plan = DealFiles(std::move(files).value(), std::move(sizes), mpi.size());
    }
    bytes = EncodePlan(plan);
  }
  Broadcast(&bytes, mpi.comm());
  Plan plan = DecodePlan(bytes);
  plan.skipped_note = importers::SkippedFilesNote(skipped);
  return plan;
}

// A file's ranks summarized (analysis::SummarizeRank); their GPU tables go to |kept|.
SummarizedFile Summarize(ImportedFile f, const analysis::AnalyzeOptions& options, analysis::KeptRanks* kept,
                         bool whole) {
  SummarizedFile out{std::move(f.error), {}};
  for (model::RankTrace& r : f.ranks) {
    model::RankTrace table;
    out.ranks.push_back(analysis::SummarizeRank(std::move(r), options, &table, whole));
    if (!whole) kept->Keep(std::move(table));
  }
  return out;
}

// ---- a worker ----

// Imports the share on the import threads, sends rank 0 its ranks' steps and takes the
// choice back; then summarizes each file on the import threads while the main thread posts
// each finished one to rank 0 as soon as it is encoded (at most kInFlight at once) and,
// while one is in flight, drives the sends with MPI_Test and a yield (what a blocking MPI
// call does when cores are oversubscribed): a large message moves in fragments that this
// side must push, and a sleep between them would make rank 0 wait on this process. False
// when rank 0 refused the steps (nothing is sent).
bool SendShare(const Plan& plan, const MpiJob& job, analysis::KeptRanks* kept, const MpiSession& mpi) {
  constexpr size_t kInFlight = 2;
  constexpr auto kIdle = std::chrono::milliseconds(50);
  const importers::LoadOptions& options = job.load;
  std::vector<size_t> mine = plan.FilesOf(mpi.rank());
  std::vector<ImportedFile> files(mine.size());
  ParallelFor(mine.size(), options.threads,
              [&](size_t j) { files[j] = importers::ImportOneFile(plan.files[mine[j]], options); });
  SendTo(0, kSteps, EncodeSteps(files), mpi.comm());
  Result<analysis::StepChoice> choice = ShareChoice(analysis::StepChoice{}, mpi);  // rank 0's, on arrival
  if (!choice.ok()) return false;
  analysis::AnalyzeOptions with_steps = job.analyze;
  with_steps.steps = std::move(choice).value();
  size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads) : std::thread::hardware_concurrency();
  Outbox outbox(threads);
  std::thread summarizer([&] {
    ParallelFor(mine.size(), options.threads, [&](size_t j) {
      SummarizedFile f = Summarize(std::move(files[j]), with_steps, kept, job.whole_ranks);
      outbox.Push(EncodeFile(mine[j], f));
    });
    outbox.Close();
  });
  std::deque<Sending> sending;
  bool finished = false;
  while (!finished || !sending.empty()) {
    if (!finished && sending.size() < kInFlight) {
      // Nothing in flight: sleep until a file is ready. Else only look, and go on sending.
      auto wait = sending.empty() ? kIdle : std::chrono::microseconds(0);
      if (std::optional<std::vector<uint8_t>> message = outbox.Pop(wait, &finished))
        sending.emplace_back(std::move(*message), mpi.comm());
    }
    if (sending.empty()) continue;
    if (sending.front().Done()) sending.pop_front();
    else std::this_thread::yield();
  }
  summarizer.join();
  return true;
}

// ---- rank 0 ----

// Receives a file message if one has come and decodes it into its slot; its index.
std::optional<uint64_t> TryReceiveFile(const Plan& plan, const MpiSession& mpi, std::vector<SummarizedFile>* imported) {
  int from = 0;
  std::optional<std::vector<uint8_t>> message = TryReceive(MPI_ANY_SOURCE, kFile, mpi.comm(), &from);
  if (!message) return std::nullopt;
  uint64_t file = UINT64_MAX, payload = 0;
  const size_t have = message->size();
  if (!ReadFileHeader(*message, &file, &payload) || file >= plan.files.size() ||
      plan.owner[file] != static_cast<uint64_t>(from))
    Abort(fmt::format("MPI process {} sent a file it was not given", from), mpi.comm());
  message->resize(kFileHeader + payload);
  ReceiveRest(from, &*message, have, mpi.comm());
  (*imported)[file] = DecodeFile(std::span<const uint8_t>(*message).subspan(kFileHeader), plan.files[file], from);
  return file;
}

// Imports rank 0's share while the workers' steps come in, chooses the steps the summary
// covers and shares the choice, then summarizes its share while the workers' summaries
// come in. The choice's error (a --steps the traces lack) when there is one.
Result<std::vector<SummarizedFile>> GatherShares(const Plan& plan, const MpiJob& job,
                                                 const importers::LoadOptions& options,
                                                 analysis::AnalyzeOptions* analyze, analysis::KeptRanks* kept,
                                                 const MpiSession& mpi) {
  std::vector<size_t> mine = plan.FilesOf(0);
  std::vector<ImportedFile> files(mine.size());
  importers::LoadProgress* progress = options.progress;
  std::thread importer([&] {
    ParallelFor(mine.size(), options.threads, [&](size_t j) {
      ScopedReadCounter counting(progress ? &progress->bytes_read : nullptr);
      files[j] = importers::ImportOneFile(plan.files[mine[j]], options);
      if (progress) ++progress->files_done;
    });
  });
  RankSteps steps;
  const bool whole = ReceiveSteps(mpi, &steps);
  importer.join();
  for (const ImportedFile& f : files)
    for (const model::RankTrace& r : f.ranks) steps.push_back(r.steps);
  std::vector<const std::vector<model::ProfilerStep>*> per_rank;
  for (const auto& s : steps) per_rank.push_back(&s);
  Result<analysis::StepChoice> choice =
      !whole ? Result<analysis::StepChoice>(Error("internal: a worker's steps did not arrive whole"))
             : analysis::ChooseSteps(per_rank, job.steps);
  (void)ShareChoice(choice, mpi);  // rank 0 has its own
  if (!choice.ok()) return choice.status();
  analyze->steps = std::move(choice).value();

  std::vector<SummarizedFile> imported(plan.files.size());
  std::thread summarizer([&] {
    ParallelFor(mine.size(), options.threads,
                [&](size_t j) { imported[mine[j]] = Summarize(std::move(files[j]), *analyze, kept, job.whole_ranks); });
  });
  for (int polls = 0, remote = static_cast<int>(plan.files.size() - mine.size()); remote > 0;) {
    const std::optional<uint64_t> file = TryReceiveFile(plan, mpi, &imported);
    if (!file) {
      Nap(polls++);
      continue;
    }
    polls = 0;
    --remote;
    if (progress) {
      ++progress->files_done;
      progress->bytes_read += plan.sizes[*file];
    }
  }
  summarizer.join();
  return imported;
}

// Rank 0: the files' models for AssembleJob, and each rank's analysis and file by RankKey.
struct Received {
  std::vector<ImportedFile> files;
  std::map<analysis::RankKey, analysis::RankAnalysis> analyses;
  FileOfRank file_of;
};

Received Unpack(std::vector<SummarizedFile> summarized) {
  Received out;
  out.files.resize(summarized.size());
  for (size_t i = 0; i < summarized.size(); ++i) {
    out.files[i].error = std::move(summarized[i].error);
    for (analysis::RankSummary& r : summarized[i].ranks) {
      analysis::RankKey key{r.trace.path, r.trace.part};
      out.file_of[key] = i;
      out.analyses[std::move(key)] = std::move(r.analysis);
      out.files[i].ranks.push_back(std::move(r.trace));
    }
  }
  return out;
}

// Rank 0 from the plan on: gathers, assembles, analyzes, reports; the exit code.
int LeadJob(const Plan& plan, const MpiJob& job, const RankZeroHooks& hooks, analysis::KeptRanks* kept,
            const MpiSession& mpi) {
  importers::LoadProgress progress;
  progress.files_total = plan.files.size();
  progress.bytes_total = std::accumulate(plan.sizes.begin(), plan.sizes.end(), uint64_t{0});
  importers::LoadOptions options = job.load;
  options.progress = &progress;
  analysis::AnalyzeOptions with_steps = job.analyze;
  Result<std::vector<SummarizedFile>> gathered = [&] {
    std::shared_ptr<void> shown = hooks.show_progress ? hooks.show_progress(&progress) : nullptr;
    return GatherShares(plan, job, options, &with_steps, kept, mpi);
  }();
  if (!gathered.ok()) return hooks.fail(gathered.status().message(), true);
  Received received = Unpack(std::move(gathered).value());
  Result<model::Trace> trace = importers::AssembleJob(plan.files, std::move(received.files), options);
  if (trace.ok() && !plan.skipped_note.empty()) trace->warnings.push_back(plan.skipped_note);
  Result<std::vector<analysis::RankAnalysis>> ranks =
      trace.ok() ? analysis::PlaceRankAnalyses(*trace, &received.analyses)
                 : Result<std::vector<analysis::RankAnalysis>>(trace.status());
  if (!ranks.ok()) return hooks.fail(ranks.status().message(), false);
  analysis::AnalyzeOptions job_options = with_steps;
  job_options.doing_at = DoingAtOverMpi(plan, received.file_of, *trace, mpi);
  if (job.whole_ranks) {
    // The tables are here: each rank's window again, on the job's clock (its rows did not
    // travel), and the stretches measured on them.
    std::vector<analysis::RankAnalysis> whole = std::move(ranks).value();
    for (size_t r = 0; r < whole.size(); ++r)
      whole[r].window = analysis::SelectActivities(trace->ranks[r], analysis::WindowFor(job_options));
    const analysis::JobAnalysis analyzed = analysis::AnalyzeJob(*trace, std::move(whole), job_options, nullptr);
    return hooks.report(*trace, analyzed);
  }
  const analysis::AnswerStretches answer = StretchesOverMpi(plan, received.file_of, *trace, kept, mpi);
  const analysis::JobAnalysis analyzed = analysis::AnalyzeJob(*trace, std::move(ranks).value(), job_options, &answer);
  return hooks.report(*trace, analyzed);
}

}  // namespace

int AnalyzeOverMpi(const MpiJob& job, const RankZeroHooks& hooks) {
  MpiSession mpi;
  const Plan plan = SharePlan(job.paths, mpi);
  // Each process's ranks' GPU tables, which stay where they were imported.
  analysis::KeptRanks kept;
  int code = 0;
  if (!plan.error.empty()) {
    if (mpi.rank() == 0) code = hooks.fail(plan.error, false);
  } else if (mpi.rank() != 0) {
    SendShare(plan, job, &kept, mpi);
    return ServeUntilExitCode(plan, &kept, mpi);
  } else {
    code = LeadJob(plan, job, hooks, &kept, mpi);
  }
  return ShareExitCode(code, mpi.comm());
}

}  // namespace commlens::distributed
