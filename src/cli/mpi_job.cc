#include "cli/mpi_job.h"

// The C API only: Open MPI's and MPICH's headers would pull in the C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <thread>

#include "analysis/rank_summary.h"
#include "cli/host_lookup.h"
#include "cli/progress.h"
#include "cli/verbs.h"
#include "common/file.h"
#include "common/parallel_for.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"

namespace commlens::cli {

namespace {

using importers::ImportedFile;

// Worker to rank 0, one message per file: {file index, payload bytes} and the payload
// (EncodeFile), tagged kFile; a message over kChunk continues in kMore messages.
constexpr int kFile = 1;
constexpr int kMore = 2;
// Rank 0 to a worker while it reports: what a rank of the worker's share was doing at a
// moment ({file index, part, decoded bytes, time on the file's clock}); the worker
// answers in words.
constexpr int kQuery = 3;
constexpr int kAnswer = 4;
// Rank 0 to a worker after the first run of the cross-rank analyses: the GPU stretch
// questions about the ranks it holds (analysis::EncodeStretchBatch); the worker answers
// (EncodeStretchAnswers).
constexpr int kStretches = 5;
constexpr int kStretchAnswers = 6;
// A worker to rank 0 once its share is imported, before any summary: its ranks' profiler
// steps (one message). Rank 0 chooses the steps the summary covers (warm-up left out,
// analysis/step_choice.h) from every rank's and broadcasts the choice.
constexpr int kSteps = 7;
constexpr size_t kChunk = size_t{1} << 30;  // MPI counts are ints

// ---- plain byte strings: the plan and a file's payload ----

void PutU64(std::vector<uint8_t>* out, uint64_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), p, p + sizeof v);
}

void PutStr(std::vector<uint8_t>* out, std::string_view s) {
  PutU64(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

// Reads back what PutU64/PutStr wrote; false once anything is missing.
struct Cursor {
  std::span<const uint8_t> bytes;
  size_t at = 0;

  bool Take(size_t n, std::span<const uint8_t>* out) {
    if (n > bytes.size() - at) return false;
    *out = bytes.subspan(at, n);
    at += n;
    return true;
  }
  bool U64(uint64_t* v) {
    std::span<const uint8_t> s;
    if (!Take(sizeof *v, &s)) return false;
    std::memcpy(v, s.data(), sizeof *v);
    return true;
  }
  bool Str(std::string* v) {
    uint64_t n = 0;
    std::span<const uint8_t> s;
    if (!U64(&n) || !Take(n, &s)) return false;
    v->assign(s.begin(), s.end());
    return true;
  }
};

// ---- MPI: the session and polite waiting ----

// MPI_Init_thread .. MPI_Finalize, with a communicator of our own.
class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiSession() {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// A short sleep that grows with the number of empty polls, to 200 us: a waiting process
// costs next to no CPU and still drives its sends and answers within a fraction of a
// millisecond.
void Nap(int polls) { std::this_thread::sleep_for(std::chrono::microseconds(std::min(200, 10 * polls))); }

// Waits for |request| without keeping a core busy (a blocking MPI call spins).
void Await(MPI_Request* request) {
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    Nap(polls);
  }
}

// Rank 0's |bytes| on every process.
void Broadcast(std::vector<uint8_t>* bytes, MPI_Comm comm) {
  uint64_t n = bytes->size();
  MPI_Request r;
  MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, comm, &r);
  Await(&r);
  bytes->resize(n);
  for (size_t at = 0; at < n; at += kChunk) {
    MPI_Ibcast(bytes->data() + at, static_cast<int>(std::min(kChunk, n - at)), MPI_BYTE, 0, comm, &r);
    Await(&r);
  }
}

// ---- the plan: which process imports which file ----

struct Plan {
  std::string error;  // the inputs name no trace: nothing to do
  std::vector<std::string> files;
  std::vector<uint64_t> sizes;  // on disk
  std::vector<uint64_t> owner;  // the process that imports files[i]

  // The files of |process|, largest first.
  std::vector<size_t> FilesOf(int process) const {
    std::vector<size_t> mine;
    for (size_t i = 0; i < files.size(); ++i)
      if (owner[i] == static_cast<uint64_t>(process)) mine.push_back(i);
    std::stable_sort(mine.begin(), mine.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
    return mine;
  }
};

// Largest file first, to the process with the least work so far: its bytes (+1 a file,
// so files of unknown size still spread). Rank 0 also receives and decodes every rank the
// others import, runs the job-level analyses and writes the report, so it is charged a
// fifth of each other file too (measured when whole models travelled: 2 ms of decoding
// against 10 ms of import a file; a summary decodes faster). That keeps its own share,
// and the GPU tables it holds beside every summary, small: about an eighth of the files
// at 4 processes.
Plan DealFiles(std::vector<std::string> files, int processes) {
  Plan plan;
  plan.files = std::move(files);
  for (const std::string& f : plan.files) plan.sizes.push_back(importers::InputFileSize(f));
  plan.owner.assign(plan.files.size(), 0);
  std::vector<size_t> order(plan.files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.sizes[a] > plan.sizes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(processes), 0);
  for (size_t i : order) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan.owner[i] = p;
    load[p] += plan.sizes[i] + 1;
    if (p != 0) load[0] += (plan.sizes[i] + 1) / 5;
  }
  return plan;
}

// Rank 0 expands the inputs and deals the files; every process gets the same plan.
Plan SharePlan(const std::vector<std::string>& inputs, const MpiSession& mpi) {
  std::vector<uint8_t> bytes;
  if (mpi.rank() == 0) {
    Result<std::vector<std::string>> files = importers::ExpandInputs(inputs);
    if (!files.ok()) {
      PutU64(&bytes, 1);
      PutStr(&bytes, files.status().message());
    } else {
      Plan plan = DealFiles(std::move(files).value(), mpi.size());
      PutU64(&bytes, 0);
      PutU64(&bytes, plan.files.size());
      for (size_t i = 0; i < plan.files.size(); ++i) {
        PutStr(&bytes, plan.files[i]);
        PutU64(&bytes, plan.sizes[i]);
        PutU64(&bytes, plan.owner[i]);
      }
    }
  }
  Broadcast(&bytes, mpi.comm());
  Plan plan;
  Cursor in{bytes};
  uint64_t failed = 0, n = 0;
  bool ok = in.U64(&failed) && (failed ? in.Str(&plan.error) : in.U64(&n));
  for (uint64_t i = 0; ok && !failed && i < n; ++i) {
    plan.files.emplace_back();
    plan.sizes.emplace_back();
    plan.owner.emplace_back();
    ok = in.Str(&plan.files.back()) && in.U64(&plan.sizes.back()) && in.U64(&plan.owner.back());
  }
  if (!ok) plan.error = "internal: the plan from rank 0 is damaged";
  return plan;
}

// ---- the steps the summary covers, chosen by rank 0 from every rank's ----

using RankSteps = std::vector<std::vector<model::ProfilerStep>>;

// Every rank's steps in |files|: {ranks, then per rank {steps, then {number, start, end}}}.
std::vector<uint8_t> EncodeSteps(const std::vector<ImportedFile>& files) {
  std::vector<uint8_t> out;
  uint64_t ranks = 0;
  for (const ImportedFile& f : files) ranks += f.ranks.size();
  PutU64(&out, ranks);
  for (const ImportedFile& f : files)
    for (const model::RankTrace& r : f.ranks) {
      PutU64(&out, r.steps.size());
      for (const model::ProfilerStep& s : r.steps) {
        PutU64(&out, static_cast<uint64_t>(s.number));
        PutU64(&out, static_cast<uint64_t>(s.start));
        PutU64(&out, static_cast<uint64_t>(s.end));
      }
    }
  return out;
}

bool DecodeSteps(std::span<const uint8_t> bytes, RankSteps* out) {
  Cursor in{bytes};
  uint64_t ranks = 0;
  if (!in.U64(&ranks)) return false;
  for (uint64_t r = 0; r < ranks; ++r) {
    uint64_t n = 0;
    if (!in.U64(&n) || n > bytes.size()) return false;
    std::vector<model::ProfilerStep>& steps = out->emplace_back();
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t number = 0, start = 0, end = 0;
      if (!in.U64(&number) || !in.U64(&start) || !in.U64(&end)) return false;
      steps.push_back({static_cast<int64_t>(number), static_cast<model::TimeNs>(start), static_cast<model::TimeNs>(end)});
    }
  }
  return in.at == bytes.size();
}

// {0, by user, steps, then {number, length, left out, cut}} or {1, the error}.
std::vector<uint8_t> EncodeChoice(const Result<analysis::StepChoice>& choice) {
  std::vector<uint8_t> out;
  PutU64(&out, choice.ok() ? 0 : 1);
  if (!choice.ok()) {
    PutStr(&out, choice.status().message());
    return out;
  }
  PutU64(&out, choice->selected_by_user);
  PutU64(&out, choice->steps.size());
  for (const analysis::StepChoice::Step& s : choice->steps) {
    const auto& [number, length, left_out, cut] = s;  // a field added and not sent stops the build
    PutU64(&out, static_cast<uint64_t>(number));
    PutU64(&out, static_cast<uint64_t>(length));
    PutStr(&out, left_out);
    PutU64(&out, cut);
  }
  return out;
}

Result<analysis::StepChoice> DecodeChoice(std::span<const uint8_t> bytes) {
  Cursor in{bytes};
  uint64_t failed = 1, user = 0, n = 0;
  std::string error = "internal: the steps from rank 0 are damaged";
  if (!in.U64(&failed)) return Error(error);
  if (failed) {
    if (in.Str(&error)) return Error(error);
    return Error("internal: the steps from rank 0 are damaged");
  }
  analysis::StepChoice c;
  if (!in.U64(&user) || !in.U64(&n)) return Error(error);
  c.selected_by_user = user != 0;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t number = 0, length = 0, cut = 0;
    analysis::StepChoice::Step& s = c.steps.emplace_back();
    if (!in.U64(&number) || !in.U64(&length) || !in.Str(&s.left_out) || !in.U64(&cut)) return Error(error);
    s.number = static_cast<int64_t>(number);
    s.length = static_cast<model::TimeNs>(length);
    s.cut = cut != 0;
  }
  return c;
}

// Rank 0's choice (or its error) on every process.
Result<analysis::StepChoice> ShareChoice(const Result<analysis::StepChoice>& mine, const MpiSession& mpi) {
  std::vector<uint8_t> bytes;
  if (mpi.rank() == 0) bytes = EncodeChoice(mine);
  Broadcast(&bytes, mpi.comm());
  return DecodeChoice(bytes);
}

// ---- one file's payload ----

constexpr size_t kMessageHeader = 2 * sizeof(uint64_t);

// A file imported and each of its ranks summarized (analysis::SummarizeRank); the ranks'
// GPU tables go to |kept|.
struct SummarizedFile {
  std::string error;
  std::vector<analysis::RankSummary> ranks;
};

SummarizedFile Summarize(ImportedFile f, const analysis::AnalyzeOptions& options, analysis::KeptRanks* kept) {
  SummarizedFile out{std::move(f.error), {}};
  for (model::RankTrace& r : f.ranks) {
    model::RankTrace table;
    out.ranks.push_back(analysis::SummarizeRank(std::move(r), options, &table));
    kept->Keep(std::move(table));
  }
  return out;
}

// |f|'s message: file index, payload size, then the payload: its error, its ranks.
std::vector<uint8_t> EncodeFile(uint64_t file, const SummarizedFile& f) {
  std::vector<uint8_t> out;
  PutU64(&out, file);
  PutU64(&out, 0);
  PutStr(&out, f.error);
  PutU64(&out, f.ranks.size());
  for (const analysis::RankSummary& r : f.ranks) {
    size_t length_at = out.size();
    PutU64(&out, 0);
    analysis::EncodeRankSummary(r, &out);
    uint64_t length = out.size() - length_at - sizeof(uint64_t);
    std::memcpy(out.data() + length_at, &length, sizeof length);
  }
  uint64_t payload = out.size() - kMessageHeader;
  std::memcpy(out.data() + sizeof(uint64_t), &payload, sizeof payload);
  return out;
}

SummarizedFile DecodeFile(std::span<const uint8_t> bytes, const std::string& path, int from) {
  auto damaged = [&](const std::string& why) {
    return SummarizedFile{fmt::format("{}: imported by MPI process {} but not received whole: {}", path, from, why), {}};
  };
  SummarizedFile f;
  Cursor in{bytes};
  uint64_t ranks = 0;
  if (!in.Str(&f.error) || !in.U64(&ranks)) return damaged("truncated header");
  for (uint64_t k = 0; k < ranks; ++k) {
    uint64_t length = 0;
    std::span<const uint8_t> encoded;
    if (!in.U64(&length) || !in.Take(length, &encoded)) return damaged("truncated rank");
    Result<analysis::RankSummary> r = analysis::DecodeRankSummary(encoded);
    if (!r.ok()) return damaged(r.status().message());
    f.ranks.push_back(std::move(r).value());
  }
  return f;
}

// ---- workers: import, encode, send ----

// Encoded files between the import threads and the sending main thread; Push blocks while
// |capacity| are waiting, so a worker's memory stays bounded whatever its share.
class Outbox {
 public:
  explicit Outbox(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

  void Push(std::vector<uint8_t> message) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(message));
    ready_.notify_one();
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_one();
  }
  // A message, or none after |wait|; |*finished| once none will come.
  std::optional<std::vector<uint8_t>> Pop(std::chrono::microseconds wait, bool* finished) {
    std::unique_lock lock(mu_);
    ready_.wait_for(lock, wait, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) {
      *finished = closed_;
      return std::nullopt;
    }
    std::vector<uint8_t> message = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return message;
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::vector<uint8_t>> items_;
  bool closed_ = false;
};

// A message on its way to rank 0: kept until its sends complete.
struct Sending {
  std::vector<uint8_t> message;
  std::vector<MPI_Request> requests;

  bool Done() {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    return done;
  }
};

Sending Post(std::vector<uint8_t> message, MPI_Comm comm) {
  Sending s{std::move(message), {}};
  for (size_t at = 0; at < s.message.size(); at += kChunk) {
    s.requests.emplace_back();
    MPI_Isend(s.message.data() + at, static_cast<int>(std::min(kChunk, s.message.size() - at)), MPI_BYTE, 0,
              at == 0 ? kFile : kMore, comm, &s.requests.back());
  }
  return s;
}

// Imports the share on the import threads, sends rank 0 its ranks' steps and takes the
// choice back; then summarizes each file on the import threads while the main thread posts
// each finished one to rank 0 as soon as it is encoded (at most kInFlight at once) and,
// while one is in flight, drives the sends with MPI_Test and a yield (what a blocking MPI
// call does when cores are oversubscribed): a large message moves in fragments that this
// side must push, and a sleep between them would make rank 0 wait on this process. False
// when rank 0 refused the steps (nothing is sent).
void SendTo(int to, int tag, std::vector<uint8_t> bytes, MPI_Comm comm);

bool SendShare(const Plan& plan, const JobInputs& inputs, const analysis::AnalyzeOptions& analyze,
               analysis::KeptRanks* kept, const MpiSession& mpi) {
  constexpr size_t kInFlight = 2;
  constexpr auto kIdle = std::chrono::milliseconds(50);
  const importers::LoadOptions& options = inputs.load;
  std::vector<size_t> mine = plan.FilesOf(mpi.rank());
  std::vector<ImportedFile> files(mine.size());
  ParallelFor(mine.size(), options.threads,
              [&](size_t j) { files[j] = importers::ImportOneFile(plan.files[mine[j]], options); });
  SendTo(0, kSteps, EncodeSteps(files), mpi.comm());
  Result<analysis::StepChoice> choice = ShareChoice(analysis::StepChoice{}, mpi);  // rank 0's, on arrival
  if (!choice.ok()) return false;
  analysis::AnalyzeOptions with_steps = analyze;
  with_steps.steps = std::move(choice).value();
  size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads) : std::thread::hardware_concurrency();
  Outbox outbox(threads);
  std::thread summarizer([&] {
    ParallelFor(mine.size(), options.threads, [&](size_t j) {
      SummarizedFile f = Summarize(std::move(files[j]), with_steps, kept);
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
        sending.push_back(Post(std::move(*message), mpi.comm()));
    }
    if (sending.empty()) continue;
    if (sending.front().Done()) sending.pop_front();
    else std::this_thread::yield();
  }
  summarizer.join();
  return true;
}

// ---- rank 0: import its share, receive the others ----

// Receives the file message |probed| announced and decodes it into its slot; its index.
uint64_t ReceiveFile(MPI_Message probed, const MPI_Status& status, const Plan& plan, MPI_Comm comm,
                     std::vector<SummarizedFile>* imported) {
  const int from = status.MPI_SOURCE;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<uint8_t> message(static_cast<size_t>(count));
  MPI_Mrecv(message.data(), count, MPI_BYTE, &probed, MPI_STATUS_IGNORE);
  uint64_t file = UINT64_MAX, payload = 0;
  if (message.size() >= kMessageHeader) {
    std::memcpy(&file, message.data(), sizeof file);
    std::memcpy(&payload, message.data() + sizeof file, sizeof payload);
  }
  if (file >= plan.files.size() || plan.owner[file] != static_cast<uint64_t>(from)) {
    fmt::print(stderr, "commlens: internal: MPI process {} sent a file it was not given\n", from);
    MPI_Abort(comm, kExitFailed);
  }
  message.resize(kMessageHeader + payload);
  for (size_t at = static_cast<size_t>(count); at < message.size(); at += kChunk)
    MPI_Recv(message.data() + at, static_cast<int>(std::min(kChunk, message.size() - at)), MPI_BYTE, from, kMore,
             comm, MPI_STATUS_IGNORE);
  (*imported)[file] = DecodeFile(std::span<const uint8_t>(message).subspan(kMessageHeader), plan.files[file], from);
  return file;
}

// Rank 0: imports its share while the workers' steps come in, chooses the steps the
// summary covers and shares the choice, then summarizes its share while the workers'
// summaries come in. The choice's error (a --steps the traces lack) when there is one.
Result<std::vector<SummarizedFile>> GatherShares(const Plan& plan, const JobInputs& inputs,
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
  bool damaged = false;
  for (int polls = 0, pending = mpi.size() - 1; pending > 0;) {
    int arrived = 0;
    MPI_Message probed;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, kSteps, mpi.comm(), &arrived, &probed, &status);
    if (!arrived) {
      Nap(polls++);
      continue;
    }
    polls = 0;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<uint8_t> bytes(static_cast<size_t>(count));
    MPI_Mrecv(bytes.data(), count, MPI_BYTE, &probed, MPI_STATUS_IGNORE);
    damaged |= !DecodeSteps(bytes, &steps);
    --pending;
  }
  importer.join();
  for (const ImportedFile& f : files)
    for (const model::RankTrace& r : f.ranks) steps.push_back(r.steps);
  std::vector<const std::vector<model::ProfilerStep>*> per_rank;
  for (const auto& s : steps) per_rank.push_back(&s);
  Result<analysis::StepChoice> choice =
      damaged ? Result<analysis::StepChoice>(Error("internal: a worker's steps did not arrive whole"))
              : analysis::ChooseSteps(per_rank, inputs.steps);
  ShareChoice(choice, mpi);
  if (!choice.ok()) return choice.status();
  analyze->steps = std::move(choice).value();

  std::vector<SummarizedFile> imported(plan.files.size());
  std::thread summarizer([&] {
    ParallelFor(mine.size(), options.threads,
                [&](size_t j) { imported[mine[j]] = Summarize(std::move(files[j]), *analyze, kept); });
  });
  size_t remote = plan.files.size() - mine.size();
  for (int polls = 0; remote > 0;) {
    int arrived = 0;
    MPI_Message probed;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, kFile, mpi.comm(), &arrived, &probed, &status);
    if (!arrived) {
      Nap(polls++);
      continue;
    }
    polls = 0;
    uint64_t file = ReceiveFile(probed, status, plan, mpi.comm(), &imported);
    --remote;
    if (progress) {
      ++progress->files_done;
      progress->bytes_read += plan.sizes[file];
    }
  }
  summarizer.join();
  return imported;
}

// Rank 0's |code| on every process.
int ShareExitCode(int code, MPI_Comm comm) {
  MPI_Request r;
  MPI_Ibcast(&code, 1, MPI_INT, 0, comm, &r);
  Await(&r);
  return code;
}

// ---- what a stopped rank was doing: its file read again where it was imported ----

// A message from |from| with |tag| if one has come.
std::optional<std::vector<uint8_t>> TryReceive(int from, int tag, MPI_Comm comm) {
  int arrived = 0;
  MPI_Message probed;
  MPI_Status status;
  MPI_Improbe(from, tag, comm, &arrived, &probed, &status);
  if (!arrived) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<uint8_t> bytes(static_cast<size_t>(count));
  MPI_Mrecv(bytes.data(), count, MPI_BYTE, &probed, MPI_STATUS_IGNORE);
  return bytes;
}

// A message from |from| with |tag|, once it has come.
std::vector<uint8_t> ReceiveFrom(int from, int tag, MPI_Comm comm) {
  for (int polls = 0;; ++polls) {
    if (std::optional<std::vector<uint8_t>> bytes = TryReceive(from, tag, comm)) return std::move(*bytes);
    Nap(polls);
  }
}

void SendTo(int to, int tag, std::vector<uint8_t> bytes, MPI_Comm comm) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    fmt::print(stderr, "commlens: internal: a message of {} bytes to MPI process {} (at most 2 GiB)\n", bytes.size(), to);
    MPI_Abort(comm, kExitFailed);
  }
  MPI_Request r;
  MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, comm, &r);
  Await(&r);
}

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

// What a rank was doing, asked by rank 0 ({file index, part, decoded bytes, time on the
// file's clock}), in words; empty when the question is damaged or the file changed.
std::vector<uint8_t> AnswerDoingAt(std::span<const uint8_t> bytes, const Plan& plan, HostEventsAgain* again) {
  Cursor in{bytes};
  uint64_t file = 0, part = 0, decoded = 0, time = 0;
  std::string answer;
  if (in.U64(&file) && in.U64(&part) && in.U64(&decoded) && in.U64(&time) && file < plan.files.size())
    answer = again->DoingAt(plan.files[file], static_cast<uint32_t>(part), decoded, static_cast<model::TimeNs>(time));
  return std::vector<uint8_t>(answer.begin(), answer.end());
}

// A worker once its share is sent: answers rank 0's questions until rank 0 shares the
// exit code (after its report, so no question comes later).
int ServeUntilExitCode(const Plan& plan, analysis::KeptRanks* kept, const MpiSession& mpi) {
  int code = kExitOk;
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

// Rank 0: which file (index in the plan) each received rank came from, so which process
// holds it.
using FileOfRank = std::map<analysis::RankKey, uint64_t>;

// Rank 0's analysis::DoingAtLookup: a rank of its own share is read again here, another
// process's is asked of that process, one question at a time (rank 0 runs the analyses
// on its main thread, the one that calls MPI).
analysis::DoingAtLookup DoingAtOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                       const MpiSession& mpi) {
  auto again = std::make_shared<HostEventsAgain>();
  return [&plan, &file_of, &trace, &mpi, again](size_t r, model::TimeNs t) -> std::string {
    const model::RankTrace& rank = trace.ranks[r];
    const auto file = file_of.find({rank.path, rank.part});
    if (file == file_of.end()) return {};
    const int owner = static_cast<int>(plan.owner[file->second]);
    if (owner == 0) return again->DoingAt(trace, r, t);
    std::vector<uint8_t> query;
    PutU64(&query, file->second);
    PutU64(&query, rank.part);
    PutU64(&query, rank.input_bytes);
    PutU64(&query, static_cast<uint64_t>(FileTime(trace, r, t)));
    SendTo(owner, kQuery, std::move(query), mpi.comm());
    std::vector<uint8_t> answer = ReceiveFrom(owner, kAnswer, mpi.comm());
    return std::string(answer.begin(), answer.end());
  };
}

// Rank 0's analysis::AnswerStretches: one batch to each process for the ranks it holds
// (all sent before any answer is awaited, so the processes answer at once); rank 0's own
// from |kept|. A batch or answer that does not decode stops the job: both ends run this
// build, so it is a fault, not bad input.
analysis::AnswerStretches StretchesOverMpi(const Plan& plan, const FileOfRank& file_of, const model::Trace& trace,
                                           analysis::KeptRanks* kept, const MpiSession& mpi) {
  return [&plan, &file_of, &trace, kept, &mpi](const analysis::PerRank<analysis::StretchQuestion>& questions) {
    analysis::StretchRound round = analysis::SplitByOwner(trace, questions, [&](size_t r) {
      return static_cast<int>(plan.owner[file_of.at({trace.ranks[r].path, trace.ranks[r].part})]);
    });
    auto fail = [&](const std::string& why) {
      fmt::print(stderr, "commlens: internal: {}\n", why);
      MPI_Abort(mpi.comm(), kExitFailed);
    };
    for (const auto& [owner, batch] : round.batches) {
      if (owner == 0) continue;
      std::vector<uint8_t> bytes;
      analysis::EncodeStretchBatch(batch, &bytes);
      SendTo(owner, kStretches, std::move(bytes), mpi.comm());
    }
    if (auto own = round.batches.find(0); own != round.batches.end()) {
      Result<std::vector<std::vector<analysis::StretchAnswer>>> answers = kept->Answer(own->second);
      if (!answers.ok()) fail(answers.status().message());
      if (Status placed = round.Place(0, std::move(answers).value()); !placed.ok()) fail(placed.message());
    }
    for (const auto& [owner, batch] : round.batches) {
      if (owner == 0) continue;
      std::vector<uint8_t> bytes = ReceiveFrom(owner, kStretchAnswers, mpi.comm());
      Result<std::vector<std::vector<analysis::StretchAnswer>>> answers = analysis::DecodeStretchAnswers(bytes);
      if (!answers.ok()) fail(fmt::format("MPI process {}: {}", owner, answers.status().message()));
      if (Status placed = round.Place(owner, std::move(answers).value()); !placed.ok())
        fail(fmt::format("MPI process {}: {}", owner, placed.message()));
    }
    return std::move(round.answers);
  };
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

}  // namespace

int RunOverMpi(const JobInputs& inputs, const analysis::AnalyzeOptions& analyze, std::string_view verb, bool quiet,
               const std::function<int(const model::Trace&, const analysis::JobAnalysis&)>& report) {
  MpiSession mpi;
  Plan plan = SharePlan(inputs.paths, mpi);
  int code = kExitOk;
  // Each process's ranks' GPU tables, which stay where they were imported.
  analysis::KeptRanks kept;
  if (!plan.error.empty()) {
    if (mpi.rank() == 0) fmt::print(stderr, "commlens {}: {}\n", verb, plan.error);
    code = kExitFailed;
  } else if (mpi.rank() != 0) {
    SendShare(plan, inputs, analyze, &kept, mpi);
    return ServeUntilExitCode(plan, &kept, mpi);
  } else {
    importers::LoadProgress progress;
    progress.files_total = plan.files.size();
    progress.bytes_total = std::accumulate(plan.sizes.begin(), plan.sizes.end(), uint64_t{0});
    importers::LoadOptions options = inputs.load;
    options.progress = &progress;
    analysis::AnalyzeOptions with_steps = analyze;
    Result<std::vector<SummarizedFile>> gathered = [&] {
      ProgressLine line(&progress, quiet);
      return GatherShares(plan, inputs, options, &with_steps, &kept, mpi);
    }();
    if (!gathered.ok()) {
      fmt::print(stderr, "commlens {}: {}\n", verb, gathered.status().message());
      return ShareExitCode(kExitUsage, mpi.comm());
    }
    Received received = Unpack(std::move(gathered).value());
    Result<model::Trace> trace = importers::AssembleJob(plan.files, std::move(received.files), options);
    Result<std::vector<analysis::RankAnalysis>> ranks =
        trace.ok() ? analysis::PlaceRankAnalyses(*trace, &received.analyses) : Result<std::vector<analysis::RankAnalysis>>(trace.status());
    if (!ranks.ok()) {
      fmt::print(stderr, "commlens {}: {}\n", verb, ranks.status().message());
      code = kExitFailed;
    } else {
      analysis::AnalyzeOptions job_options = with_steps;
      job_options.doing_at = DoingAtOverMpi(plan, received.file_of, *trace, mpi);
      const analysis::AnswerStretches answer = StretchesOverMpi(plan, received.file_of, *trace, &kept, mpi);
      const analysis::JobAnalysis job = analysis::AnalyzeJob(*trace, std::move(ranks).value(), job_options, &answer);
      code = report(*trace, job);
    }
  }
  return ShareExitCode(code, mpi.comm());
}

}  // namespace commlens::cli
