#include "report/html/step_timeline.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "analysis/intervals.h"

namespace commlens::report::html {

namespace {

using analysis::Interval;
using analysis::IntervalList;
using model::TimeNs;

constexpr size_t kMaxRowsWithStreams = 256;  // beyond this, summary rows only
constexpr size_t kMinRectsPerRow = 8;
constexpr size_t kMaxRectsPerRow = 2000;

// The GPU activity rows of one rank that the timeline covers, or empty.
struct RankSelection {
  std::vector<uint32_t> rows;
  IntervalList ops;  // communication ops, for a rank without GPU activities
};

RankSelection SelectRank(const model::RankTrace& r, const analysis::RankAnalysis& a, int64_t step) {
  RankSelection sel;
  int32_t index = -1;
  TimeNs lo = INT64_MIN, hi = INT64_MAX;
  if (step >= 0) {
    for (size_t k = 0; k < r.steps.size(); ++k)
      if (r.steps[k].number == step) {
        index = static_cast<int32_t>(k);
        lo = r.steps[k].start;
        hi = r.steps[k].end;
      }
    if (index < 0) return sel;  // this rank did not run the step
  }
  for (size_t j = 0; j < a.window.rows.size(); ++j)
    if (step < 0 || a.window.step_of[j] == index) sel.rows.push_back(a.window.rows[j]);
  if (sel.rows.empty() && r.gpu.size() == 0) {
    const std::vector<uint8_t> in = analysis::OpsInWindow(r, a.window);
    for (size_t k = 0; k < r.comms.size(); ++k)
      if (in[k] && r.comms.start[k] >= lo && r.comms.start[k] <= hi && r.comms.end[k] > r.comms.start[k])
        sel.ops.push_back({r.comms.start[k], r.comms.end[k]});
    analysis::Merge(&sel.ops);
  }
  return sel;
}

TimelineState StateOf(model::ActivityClass c) {
  switch (c) {
    case model::ActivityClass::kCompute: return TimelineState::kCompute;
    case model::ActivityClass::kCommunication: return TimelineState::kComm;
    case model::ActivityClass::kMemory: return TimelineState::kMemory;
    default: return TimelineState::kOther;
  }
}

// Merged lists per state into one row sorted by start.
TimelineRow MakeRow(int rank, int device, int stream,
                    const std::vector<std::pair<TimelineState, IntervalList>>& lists) {
  TimelineRow row;
  row.rank = rank;
  row.device = device;
  row.stream = stream;
  struct Rect { TimeNs s, e; TimelineState st; };
  std::vector<Rect> all;
  for (const auto& [state, list] : lists)
    for (const Interval& iv : list) all.push_back({iv.start, iv.end, state});
  std::sort(all.begin(), all.end(), [](const Rect& a, const Rect& b) { return a.s < b.s; });
  for (const Rect& r : all) {
    row.start.push_back(r.s);
    row.end.push_back(r.e);
    row.state.push_back(r.st);
  }
  return row;
}

}  // namespace

TimeNs CoarsenRow(TimelineRow* row, size_t cap) {
  const size_t n = row->start.size();
  if (n <= cap) return 0;
  // Gaps between consecutive intervals of the same state.
  std::array<size_t, 5> last;
  last.fill(SIZE_MAX);
  std::vector<TimeNs> gaps;
  gaps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    size_t& prev = last[static_cast<size_t>(row->state[i])];
    if (prev != SIZE_MAX) gaps.push_back(row->start[i] - row->end[prev]);
    prev = i;
  }
  const size_t need = n - std::max<size_t>(cap, 1);
  if (gaps.size() < need) return 0;  // cannot happen with five states and cap >= 5
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<ptrdiff_t>(need - 1), gaps.end());
  const TimeNs threshold = gaps[need - 1];
  // Fill every same-state gap up to the threshold: extend the open interval of the state.
  TimelineRow out;
  out.rank = row->rank;
  out.device = row->device;
  out.stream = row->stream;
  last.fill(SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    size_t& open = last[static_cast<size_t>(row->state[i])];
    if (open != SIZE_MAX && row->start[i] - out.end[open] <= threshold) {
      out.end[open] = std::max(out.end[open], row->end[i]);
      continue;
    }
    open = out.start.size();
    out.start.push_back(row->start[i]);
    out.end.push_back(row->end[i]);
    out.state.push_back(row->state[i]);
  }
  *row = std::move(out);
  return threshold;
}

StepTimeline BuildStepTimeline(const model::Trace& trace, const analysis::JobAnalysis& job,
                               int64_t step, size_t budget) {
  StepTimeline tl;
  tl.step = step >= 0 ? step : job.median_span_step;
  struct RankRows {
    TimelineRow summary;
    std::vector<TimelineRow> streams;
  };
  std::vector<RankRows> per_rank(job.ranks.size());
  TimeNs t0 = INT64_MAX, t1 = INT64_MIN;
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const model::RankTrace& r = trace.ranks[i];
    const RankSelection sel = SelectRank(r, job.ranks[i], tl.step);
    // Per stream and class, and per class over the whole GPU.
    std::map<std::pair<int32_t, int32_t>, std::array<IntervalList, 4>> streams;
    std::array<IntervalList, 4> gpu;
    for (uint32_t row : sel.rows) {
      const Interval iv{r.gpu.start[row], r.gpu.end[row]};
      if (iv.end <= iv.start) continue;
      const auto c = static_cast<size_t>(StateOf(r.gpu.cls[row]));
      streams[{r.gpu.device[row], r.gpu.stream[row]}][c].push_back(iv);
      gpu[c].push_back(iv);
    }
    for (auto& l : gpu) analysis::Merge(&l);
    const IntervalList& compute = gpu[0];
    IntervalList comm = sel.ops.empty() ? gpu[1] : sel.ops;
    IntervalList rest = gpu[2];
    rest.insert(rest.end(), gpu[3].begin(), gpu[3].end());
    analysis::Merge(&rest);
    IntervalList exposed = analysis::Difference(comm, compute);
    IntervalList memory = analysis::Difference(analysis::Difference(rest, compute), comm);
    for (const IntervalList* l : std::array<const IntervalList*, 3>{&compute, &comm, &rest})
      if (!l->empty()) {
        t0 = std::min(t0, l->front().start);
        t1 = std::max(t1, l->back().end);
      }
    per_rank[i].summary = MakeRow(r.rank, -1, -1,
                                  {{TimelineState::kCompute, compute},
                                   {TimelineState::kExposedComm, exposed},
                                   {TimelineState::kMemory, memory}});
    for (auto& [key, lists] : streams) {
      std::vector<std::pair<TimelineState, IntervalList>> by_state;
      for (size_t c = 0; c < 4; ++c)
        if (!lists[c].empty()) by_state.emplace_back(static_cast<TimelineState>(c), analysis::Merged(lists[c]));
      per_rank[i].streams.push_back(MakeRow(r.rank, key.first, key.second, by_state));
    }
  }
  if (t0 == INT64_MAX) return tl;  // nothing in the step
  tl.t0 = t0;
  tl.length = t1 - t0;
  size_t stream_rows = 0;
  for (const auto& p : per_rank) stream_rows += p.streams.size();
  tl.per_stream = per_rank.size() + stream_rows <= kMaxRowsWithStreams;
  const size_t nrows = per_rank.size() + (tl.per_stream ? stream_rows : 0);
  const size_t cap = std::clamp(budget / std::max<size_t>(nrows, 1), kMinRectsPerRow, kMaxRectsPerRow);
  auto add = [&](TimelineRow row) {
    tl.merged_gap = std::max(tl.merged_gap, CoarsenRow(&row, cap));
    for (size_t k = 0; k < row.start.size(); ++k) {
      row.start[k] -= t0;
      row.end[k] -= t0;
    }
    tl.rectangles += row.start.size();
    tl.rows.push_back(std::move(row));
  };
  for (auto& p : per_rank) {
    add(std::move(p.summary));
    if (tl.per_stream)
      for (auto& s : p.streams) add(std::move(s));
  }
  return tl;
}

}  // namespace commlens::report::html
