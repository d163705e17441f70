// libFuzzer target: arbitrary bytes through the decoders of what `analyze --mpi` sends
// between its processes (analysis/rank_summary.h): a rank's summary, a batch of GPU
// stretch questions, their answers. The first byte picks the decoder. Whatever decodes
// must re-encode to bytes that decode again, and a summary's tables must have columns of
// one length each (a seed has one column short). A summary that decodes and looks like a
// real run is then assembled into a job and analyzed as rank 0 would (the stretch
// questions answered with zeros), and the JSON report written: the decoders must never
// hand the analyses a row, string or enum out of range. "Like a real run": its times
// (comm ops, steps, host rows, the analysis' window, breakdowns and gaps) span less than
// 2^50 ns (13 days), its durations and counts are below 2^50, and no op moves 2^50 bytes
// or more. Beyond that, sums of values that each decode fine overflow int64, which no
// importer produces (the Kineto importer bounds times to +-2^62 and the analyses
// saturate their byte totals); the import fuzzers cover the importers' bounds.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <span>
#include <type_traits>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/rank_summary.h"
#include "common/json_writer.h"
#include "passes/finish.h"
#include "report/json_report.h"

namespace {

using namespace commlens;

void Require(bool ok) {
  if (!ok) std::abort();
}

// The summary's times (its model's and its analysis') within one span under 2^50 ns,
// its durations and counts below 2^50, no op of 2^50 bytes or more.
bool LikeARealRun(const analysis::RankSummary& s) {
  constexpr int64_t kLimit = int64_t{1} << 50;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto time = [&](int64_t t) {
    if (t == model::kNoTime) return;
    lo = std::min(lo, t), hi = std::max(hi, t);
  };
  bool small_enough = true;
  // |v| below 2^50, for a count or an int64 cast to unsigned (-v is then its magnitude).
  auto small = [&](uint64_t v) {
    constexpr uint64_t kSmall = uint64_t{1} << 50;
    small_enough = small_enough && (v < kSmall || -v < kSmall);
  };

  const model::RankTrace& r = s.trace;
  for (const std::vector<model::TimeNs>* c : {&r.comms.start, &r.comms.end, &r.comms.launch, &r.host.start,
                                              &r.host.end, &r.annotations.start, &r.annotations.end, &r.flows.time})
    for (model::TimeNs t : *c) time(t);
  for (const model::ProfilerStep& st : r.steps) time(st.start), time(st.end);
  for (const model::CounterSeries& c : r.counters)
    for (model::TimeNs t : c.time) time(t);
  time(r.alive_until), time(r.gpu_last_end);
  for (int64_t b : r.comms.bytes) small(static_cast<uint64_t>(std::max<int64_t>(b, 0)));
  for (model::TimeNs sync : r.comms.initial_sync)  // a length (the decoder keeps it in range)
    if (sync != model::kNoTime) small(static_cast<uint64_t>(sync));

  const analysis::RankAnalysis& a = s.analysis;
  time(a.window.cutoff), time(a.window.first_start), time(a.window.last_end);
  small(a.window.dropped), small(a.window.selected);
  auto breakdown = [&](const analysis::TimeBreakdown& b) {
    if (b.activities > 0) time(b.first_start);
    for (int64_t v : {b.span, b.busy, b.idle, b.compute, b.non_compute, b.comm, b.memory, b.overlap, b.exposed_comm})
      small(static_cast<uint64_t>(v));
    small(b.activities);
  };
  breakdown(a.time.total);
  for (const analysis::StepBreakdown& st : a.time.steps) breakdown(st.time);
  for (int64_t v : a.kernels.state_time) small(static_cast<uint64_t>(v));
  for (int64_t v : a.kernels.class_total) small(static_cast<uint64_t>(v));
  for (const analysis::KernelStat& k : a.kernels.kernels) {
    small(static_cast<uint64_t>(k.total)), small(static_cast<uint64_t>(k.min)), small(static_cast<uint64_t>(k.max));
    small(k.count);
  }
  for (const analysis::StreamIdle& st : a.idle) {
    small(static_cast<uint64_t>(st.busy)), small(static_cast<uint64_t>(st.idle)), small(st.activities);
    for (int64_t v : st.kind_time) small(static_cast<uint64_t>(v));
    for (int64_t v : st.bin_time) small(static_cast<uint64_t>(v));
    for (uint64_t v : st.kind_count) small(v);
    for (uint64_t v : st.bin_count) small(v);
    for (const analysis::Gap& g : st.longest) time(g.start), small(static_cast<uint64_t>(g.length));
  }
  return small_enough &&
         (lo > hi || (lo > -(int64_t{1} << 62) && hi < (int64_t{1} << 62) && hi - lo < kLimit));
}

template <typename... Columns>
bool AllOfLength(size_t rows, const Columns&... columns) {
  return ((columns.size() == rows) && ...);
}

// Every column of a decoded table as long as the table: the analyses loop over the first
// column's rows and index the others with them. Listed here apart from the decoder's own
// check, so that a summary with a short column (seed-0-columns-of-unequal-length) aborts
// here if the decoder ever lets it through, sanitizer or not.
bool ColumnsAgree(const model::RankTrace& r) {
  const model::GpuActivities& g = r.gpu;
  const model::HostEvents& h = r.host;
  const model::Annotations& a = r.annotations;
  const model::Flows& f = r.flows;
  const model::CommOps& c = r.comms;
  bool counters = true;
  for (const model::CounterSeries& s : r.counters) counters = counters && s.value.size() == s.time.size();
  return counters &&
         AllOfLength(g.size(), g.end, g.name, g.device, g.stream, g.correlation, g.kind, g.cls, g.copy, g.bytes, g.comm,
                     g.launch) &&
         AllOfLength(h.size(), h.end, h.name, h.pid, h.tid, h.correlation, h.kind) &&
         AllOfLength(a.size(), a.end, a.name, a.domain, a.pid, a.tid, a.device, a.depth) &&
         AllOfLength(f.size(), f.category, f.phase, f.time, f.pid, f.tid) &&
         AllOfLength(c.size(), c.end, c.op, c.dtype, c.in_elems, c.out_elems, c.bytes, c.group, c.seq, c.peer,
                     c.activity, c.algorithm, c.protocol, c.channels, c.enqueue, c.flags, c.user_tag, c.launch,
                     c.initial_sync);
}

void AnalyzeAsRankZero(analysis::RankSummary s) {
  if (!LikeARealRun(s)) return;
  model::Trace trace;
  std::map<analysis::RankKey, analysis::RankAnalysis> analyses;
  analyses[{s.trace.path, s.trace.part}] = std::move(s.analysis);
  trace.ranks.push_back(std::move(s.trace));
  passes::FinishJob(&trace);
  auto ranks = analysis::PlaceRankAnalyses(trace, &analyses);
  Require(ranks.ok());
  analysis::AnswerStretches zeros = [](const analysis::PerRank<analysis::StretchQuestion>& questions) {
    analysis::PerRank<analysis::StretchAnswer> answers(questions.size());
    for (size_t r = 0; r < questions.size(); ++r) answers[r].resize(questions[r].size());
    return answers;
  };
  analysis::AnalyzeOptions options;
  options.threads = 1;
  const analysis::JobAnalysis job = analysis::AnalyzeJob(trace, std::move(ranks).value(), options, &zeros);
  std::ostringstream json;
  WriteJson(json, report::AnalyzeToJson(trace, job), -1);  // what analyze writes
}

// What |decode| reads from |bytes|, if anything; then its encoding must decode again.
template <typename Decode, typename Encode>
auto RoundTrip(std::span<const uint8_t> bytes, Decode decode, Encode encode) {
  auto value = decode(bytes);
  using Value = std::decay_t<decltype(*value)>;
  if (!value.ok()) return std::optional<Value>();
  std::vector<uint8_t> again;
  encode(*value, &again);
  Require(decode(again).ok());
  return std::optional<Value>(std::move(value).value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      if (auto s = RoundTrip(bytes, analysis::DecodeRankSummary, analysis::EncodeRankSummary)) {
        Require(ColumnsAgree(s->trace));
        AnalyzeAsRankZero(std::move(*s));
      }
      break;
    case 1: (void)RoundTrip(bytes, analysis::DecodeStretchBatch, analysis::EncodeStretchBatch); break;
    case 2: (void)RoundTrip(bytes, analysis::DecodeStretchAnswers, analysis::EncodeStretchAnswers); break;
  }
  return 0;
}
