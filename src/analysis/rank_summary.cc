#include "analysis/rank_summary.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "common/byte_codec.h"
#include "model/host_events.h"
#include "model/rank_trace_codec.h"

namespace commlens::analysis {

RankSummary SummarizeRank(model::RankTrace rank, const AnalyzeOptions& options, model::RankTrace* kept, bool whole) {
  RankSummary s;
  s.analysis = AnalyzeRank(rank, options);
  s.analysis.trace = nullptr;
  s.analysis.window.rows = {};
  s.analysis.window.step_of = {};
  if (whole) {
    model::KeepNamedStrings(&rank);
    s.trace = std::move(rank);
    return s;
  }
  // What answers the stretch questions (GpuStretches): the table, its names, and the
  // groups of its communication kernels.
  kept->path = rank.path;
  kept->part = rank.part;
  kept->gpu = std::move(rank.gpu);
  kept->comms = rank.comms;
  kept->groups = rank.groups;
  model::KeepNamedStrings(kept, rank.strings);
  rank.gpu = model::GpuActivities{};
  rank.gpu_rows_elsewhere += kept->gpu.size();
  for (model::TimeNs end : kept->gpu.end)
    rank.gpu_last_end = rank.gpu_last_end == model::kNoTime ? end : std::max(rank.gpu_last_end, end);
  std::fill(rank.comms.activity.begin(), rank.comms.activity.end(), model::kNoIndex);
  model::KeepNamedStrings(&rank);
  s.trace = std::move(rank);
  return s;
}

void ShiftRankAnalysis(RankAnalysis* a, model::TimeNs by) {
  auto move = [by](model::TimeNs* t) {
    if (*t != model::kNoTime) *t -= by;
  };
  move(&a->window.cutoff);
  move(&a->window.first_start);
  move(&a->window.last_end);
  // A breakdown of no activity has no start (0), as computed on moved times.
  if (a->time.total.activities > 0) a->time.total.first_start -= by;
  for (StepBreakdown& s : a->time.steps)
    if (s.time.activities > 0) s.time.first_start -= by;
  for (StreamIdle& s : a->idle)
    for (Gap& gap : s.longest) gap.start -= by;
}

namespace {

constexpr uint32_t kAnalysisMagic = 0x41524c43;  // "CLRA" in a little-endian dump
constexpr uint32_t kBatchMagic = 0x51534c43;     // "CLSQ"
constexpr uint32_t kAnswersMagic = 0x41534c43;   // "CLSA"
constexpr uint32_t kVersion = 2;  // 2: the communication per process group

// Copied raw: plain numbers, and the time breakdowns (all 8-byte integers, no padding, no
// bool). Any other struct goes field by field, so a damaged byte cannot become a bool
// that is neither true nor false.
template <typename T>
constexpr bool kRaw = std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, TimeBreakdown> ||
                      std::is_same_v<T, StepBreakdown> || std::is_same_v<T, GroupComm>;
static_assert(std::has_unique_object_representations_v<TimeBreakdown> &&
                  std::has_unique_object_representations_v<StepBreakdown> &&
                  std::has_unique_object_representations_v<GroupComm>,
              "time breakdowns are copied raw: no padding");

// The fields of each struct, for both directions; structured bindings of the whole
// struct, so a field added and not listed stops the build.
template <typename T, typename F>
void WindowFields(T& w, F&& f) {
  auto& [rows, step_of, selected, filtered, cutoff, dropped, first_start, last_end] = w;
  f(selected), f(filtered), f(cutoff), f(dropped), f(first_start), f(last_end);  // not the row lists
}
template <typename T, typename F>
void KernelStatFields(T& k, F&& f) {
  auto& [name, cls, count, total, min, max, mean, stddev] = k;
  f(name), f(cls), f(count), f(total), f(min), f(max), f(mean), f(stddev);
}
template <typename T, typename F>
void GapFields(T& g, F&& f) {
  auto& [start, length, kind, before, after] = g;
  f(start), f(length), f(kind), f(before), f(after);
}
template <typename T, typename F>
void StreamIdleFields(T& s, F&& f) {
  auto& [device, stream, activities, busy, idle, kind_time, kind_count, bin_count, bin_time, longest] = s;
  f(device), f(stream), f(activities), f(busy), f(idle), f(kind_time), f(kind_count), f(bin_count), f(bin_time);
  f(longest);
}
template <typename T, typename F>
void AnalysisFields(T& a, F&& f) {
  auto& [trace, window, time, kernels, idle, ops_in_window, group_comm] = a;
  auto& [state_time, class_total, kernel_list, top_n] = kernels;
  WindowFields(window, f);
  f(time.total), f(time.steps);
  f(state_time), f(class_total), f(kernel_list), f(top_n);
  f(idle), f(ops_in_window), f(group_comm);
}
template <typename T, typename F>
void QuestionFields(T& q, F&& f) {
  auto& [lo, hi, own_group, by_name] = q;
  f(lo), f(hi), f(own_group), f(by_name);
}
template <typename T, typename F>
void BatchItemFields(T& b, F&& f) {
  auto& [path, part, offset, job_group_of, questions] = b;
  f(path), f(part), f(offset), f(job_group_of), f(questions);
}
template <typename T, typename F>
void AnswerFields(T& a, F&& f) {
  auto& [stretch, compute_by_name] = a;
  auto& [length, compute, other_comm, idle] = stretch;
  f(length), f(compute), f(other_comm), f(idle), f(compute_by_name);
}

struct Encoder {
  ByteWriter& w;

  template <typename T>
    requires kRaw<T>
  void operator()(const T& v) { w.Pod(v); }
  template <typename T, size_t N>
  void operator()(const std::array<T, N>& v) { w.Pod(v); }
  void operator()(bool v) { w.Pod(static_cast<uint8_t>(v)); }
  void operator()(const std::string& s) { w.Str(s); }
  template <typename T>
  void operator()(const std::vector<T>& list) {
    if constexpr (kRaw<T>) {
      w.Column(list);
    } else {
      w.Count(list.size());
      for (const T& item : list) Item(item);
    }
  }
  void Item(const KernelStat& k) { KernelStatFields(k, *this); }
  void Item(const Gap& g) { GapFields(g, *this); }
  void Item(const StreamIdle& s) { StreamIdleFields(s, *this); }
  void Item(const StretchBatchItem& b) { BatchItemFields(b, *this); }
  void Item(const StretchQuestion& q) { QuestionFields(q, *this); }
  void Item(const StretchAnswer& a) { AnswerFields(a, *this); }
  void Item(const std::vector<StretchAnswer>& answers) { (*this)(answers); }
  void Item(const std::pair<std::string, model::TimeNs>& p) { (*this)(p.first), (*this)(p.second); }
};

struct Decoder {
  ByteReader& in;

  template <typename T>
    requires kRaw<T> && (!std::is_same_v<T, bool>)
  void operator()(T& v) { v = in.Pod<T>(); }
  template <typename T, size_t N>
  void operator()(std::array<T, N>& v) { v = in.Pod<std::array<T, N>>(); }
  void operator()(bool& v) { in.Field(&v); }
  void operator()(std::string& s) { s = in.Str(); }
  template <typename T>
  void operator()(std::vector<T>& list) {
    if constexpr (kRaw<T>) {
      in.Column(&list);
    } else {
      // Every item takes at least one count or value: a count the bytes left cannot
      // hold is refused before anything is sized by it.
      list.resize(in.Count(sizeof(uint64_t)));
      for (T& item : list) Item(item);
    }
  }
  void Item(KernelStat& k) { KernelStatFields(k, *this); }
  void Item(Gap& g) { GapFields(g, *this); }
  void Item(StreamIdle& s) { StreamIdleFields(s, *this); }
  void Item(StretchBatchItem& b) { BatchItemFields(b, *this); }
  void Item(StretchQuestion& q) { QuestionFields(q, *this); }
  void Item(StretchAnswer& a) { AnswerFields(a, *this); }
  void Item(std::vector<StretchAnswer>& answers) { (*this)(answers); }
  void Item(std::pair<std::string, model::TimeNs>& p) { (*this)(p.first), (*this)(p.second); }
};

template <typename Fields>
void Encode(uint32_t magic, Fields&& fields, std::vector<uint8_t>* out) {
  ByteWriter counting(nullptr);
  Encoder count{counting};
  count(magic), count(kVersion);
  fields(count);
  out->reserve(out->size() + counting.size());
  ByteWriter w(out);
  Encoder e{w};
  e(magic), e(kVersion);
  fields(e);
}

template <typename T, typename Fields>
Result<T> Decode(uint32_t magic, const char* what, std::span<const uint8_t> bytes, Fields&& fields) {
  ByteReader in(bytes, what);
  T value{};
  if (in.Pod<uint32_t>() != magic) in.Fail("wrong magic");
  if (const uint32_t v = in.Pod<uint32_t>(); in.ok() && v != kVersion)
    in.Fail("version " + std::to_string(v) + ", this build reads " + std::to_string(kVersion));
  if (in.ok()) {
    Decoder d{in};
    fields(d, value);
  }
  if (in.ok() && in.left() != 0) in.Fail(std::to_string(in.left()) + " bytes after the end");
  if (!in.ok()) return Error(in.error());
  return value;
}

}  // namespace

void EncodeRankSummary(const RankSummary& s, std::vector<uint8_t>* out) {
  const size_t length_at = out->size();
  out->resize(out->size() + sizeof(uint64_t));
  model::EncodeRankTrace(s.trace, out);
  const uint64_t length = out->size() - length_at - sizeof(uint64_t);
  std::memcpy(out->data() + length_at, &length, sizeof length);
  EncodeRankAnalysis(s.analysis, out);
}

Result<RankSummary> DecodeRankSummary(std::span<const uint8_t> bytes) {
  uint64_t length = 0;
  if (bytes.size() < sizeof length) return Error("rank summary: truncated");
  std::memcpy(&length, bytes.data(), sizeof length);
  if (length > bytes.size() - sizeof length) return Error("rank summary: truncated rank");
  Result<model::RankTrace> trace = model::DecodeRankTrace(bytes.subspan(sizeof length, length));
  if (!trace.ok()) return trace.status();
  Result<RankAnalysis> analysis = DecodeRankAnalysis(bytes.subspan(sizeof length + length));
  if (!analysis.ok()) return analysis.status();
  if (analysis->ops_in_window.size() != trace->comms.size())
    return Error("rank summary: " + std::to_string(analysis->ops_in_window.size()) + " window flags for " +
                 std::to_string(trace->comms.size()) + " comm ops");
  return RankSummary{std::move(trace).value(), std::move(analysis).value()};
}

Result<std::vector<RankAnalysis>> PlaceRankAnalyses(const model::Trace& trace,
                                                    std::map<RankKey, RankAnalysis>* analyses) {
  std::vector<RankAnalysis> out(trace.ranks.size());
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    const model::RankTrace& r = trace.ranks[i];
    auto it = analyses->find({r.path, r.part});
    if (it == analyses->end())
      return Error("internal: no analysis came with rank " + std::to_string(r.rank) + " (" + r.path + ")");
    out[i] = std::move(it->second);
    analyses->erase(it);
    if (trace.clock.applied && i < trace.clock.ranks.size()) ShiftRankAnalysis(&out[i], trace.clock.ranks[i].offset);
  }
  return out;
}

StretchRound SplitByOwner(const model::Trace& trace, const PerRank<StretchQuestion>& questions,
                          const std::function<int(size_t rank_index)>& owner_of) {
  StretchRound round;
  round.answers.resize(trace.ranks.size());
  for (size_t i = 0; i < trace.ranks.size() && i < questions.size(); ++i) {
    if (questions[i].empty()) continue;
    const model::RankTrace& r = trace.ranks[i];
    StretchBatchItem item;
    item.path = r.path;
    item.part = r.part;
    item.offset = trace.clock.applied && i < trace.clock.ranks.size() ? trace.clock.ranks[i].offset : 0;
    for (const model::ProcessGroup& g : r.groups) item.job_group_of.push_back(g.job_group);
    item.questions = questions[i];
    const int owner = owner_of(i);
    round.batches[owner].push_back(std::move(item));
    round.ranks[owner].push_back(i);
  }
  return round;
}

Status StretchRound::Place(int owner, std::vector<std::vector<StretchAnswer>> got) {
  const std::vector<size_t>& ranks_asked = ranks[owner];
  const std::vector<StretchBatchItem>& asked = batches[owner];
  if (got.size() != asked.size()) return Error("GPU stretch answers: " + std::to_string(got.size()) + " ranks answered, " +
                                               std::to_string(asked.size()) + " asked");
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].size() != asked[k].questions.size())
      return Error("GPU stretch answers: " + asked[k].path + ": " + std::to_string(got[k].size()) + " answers to " +
                   std::to_string(asked[k].questions.size()) + " questions");
    answers[ranks_asked[k]] = std::move(got[k]);
  }
  return OkStatus();
}

void KeptRanks::Keep(model::RankTrace rank) {
  std::lock_guard lock(mu_);
  RankKey key{rank.path, rank.part};
  ranks_.insert_or_assign(std::move(key), std::move(rank));
}

Result<std::vector<std::vector<StretchAnswer>>> KeptRanks::Answer(const std::vector<StretchBatchItem>& batch) {
  std::lock_guard lock(mu_);
  std::vector<std::vector<StretchAnswer>> out;
  for (const StretchBatchItem& item : batch) {
    auto it = ranks_.find({item.path, item.part});
    if (it == ranks_.end()) return Error("GPU stretch questions about " + item.path + ", which was not imported here");
    out.push_back(AnswerFromTable(&it->second, item.offset, item.job_group_of, item.questions));
  }
  return out;
}

void EncodeRankAnalysis(const RankAnalysis& a, std::vector<uint8_t>* out) {
  Encode(kAnalysisMagic, [&](Encoder& e) { AnalysisFields(a, e); }, out);
}

Result<RankAnalysis> DecodeRankAnalysis(std::span<const uint8_t> bytes) {
  Result<RankAnalysis> a = Decode<RankAnalysis>(kAnalysisMagic, "rank analysis encoding", bytes,
                                                [](Decoder& d, RankAnalysis& v) { AnalysisFields(v, d); });
  if (!a.ok()) return a;
  // The enums a report indexes by.
  for (const KernelStat& k : a->kernels.kernels)
    if (static_cast<uint8_t>(k.cls) > static_cast<uint8_t>(model::ActivityClass::kUnclassified))
      return Error("rank analysis encoding: bad activity class");
  for (const StreamIdle& s : a->idle)
    for (const Gap& g : s.longest)
      if (static_cast<uint8_t>(g.kind) > static_cast<uint8_t>(GapKind::kOther))
        return Error("rank analysis encoding: bad gap kind");
  return a;
}

void EncodeStretchBatch(const std::vector<StretchBatchItem>& batch, std::vector<uint8_t>* out) {
  Encode(kBatchMagic, [&](Encoder& e) { e(batch); }, out);
}

Result<std::vector<StretchBatchItem>> DecodeStretchBatch(std::span<const uint8_t> bytes) {
  return Decode<std::vector<StretchBatchItem>>(kBatchMagic, "GPU stretch questions", bytes,
                                               [](Decoder& d, std::vector<StretchBatchItem>& v) { d(v); });
}

void EncodeStretchAnswers(const std::vector<std::vector<StretchAnswer>>& answers, std::vector<uint8_t>* out) {
  Encode(kAnswersMagic, [&](Encoder& e) { e(answers); }, out);
}

Result<std::vector<std::vector<StretchAnswer>>> DecodeStretchAnswers(std::span<const uint8_t> bytes) {
  return Decode<std::vector<std::vector<StretchAnswer>>>(
      kAnswersMagic, "GPU stretch answers", bytes, [](Decoder& d, std::vector<std::vector<StretchAnswer>>& v) { d(v); });
}

}  // namespace commlens::analysis
