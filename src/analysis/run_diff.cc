#include "analysis/run_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/arrivals.h"
#include "analysis/collectives.h"
#include "analysis/time_breakdown.h"
#include "common/saturating.h"
#include "common/strings.h"
#include "common/units.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

constexpr const char* kAllWaiting = "the ranks' waiting for late ranks, all of it";
constexpr const char* kSections[] = {"step", "breakdown", "collective", "kernel", "rank", "whatif"};

// One quantity of one run, per step. Dense: one value per summarized step, 0 where the
// step has none (a kernel not run is no time); sparse: only the steps that have it (a
// bandwidth of a step without the collective is not zero, it is absent).
struct Series {
  std::string section, name;
  std::string desc;  // a bucket's group's description in this run ("default_pg"), shown beside its members
  DiffUnit unit = DiffUnit::kTime;
  bool dense = true;
  std::vector<double> values;
};

class SeriesSet {
 public:
  explicit SeriesSet(size_t steps) : steps_(steps) {}
  Series& Get(const std::string& section, const std::string& name, DiffUnit unit, bool dense) {
    const std::string key = section + '\n' + name;
    auto [it, added] = index_.emplace(key, list_.size());
    if (added) list_.push_back({section, name, "", unit, dense, dense ? std::vector<double>(steps_, 0.0) : std::vector<double>{}});
    return list_[it->second];
  }
  Series& Add(const std::string& section, const std::string& name, DiffUnit unit, size_t step, double v) {
    Series& x = Get(section, name, unit, true);
    x.values[step] += v;
    return x;
  }
  Series& Push(const std::string& section, const std::string& name, DiffUnit unit, double v) {
    Series& x = Get(section, name, unit, false);
    x.values.push_back(v);
    return x;
  }
  const Series* Find(const std::string& section, const std::string& name) const {
    auto it = index_.find(section + '\n' + name);
    return it == index_.end() ? nullptr : &list_[it->second];
  }
  const std::vector<Series>& list() const { return list_; }
  size_t steps() const { return steps_; }
  // The sections this run can measure at all: a recording without kernels has no
  // breakdown or kernels, so a kernel it lacks is unknown there, not zero.
  void Measures(const std::string& section) { measures_.insert(section); }
  bool Measured(const std::string& section) const { return measures_.count(section) > 0; }

 private:
  size_t steps_;
  std::set<std::string> measures_;
  std::vector<Series> list_;
  std::unordered_map<std::string, size_t> index_;
};

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// A bucket as both runs can name it: the group by its stable label (GroupLabels), the op,
// the size range.
std::string BucketName(const CollectiveBucket& b, const std::unordered_map<std::string, std::string>& labels) {
  const std::string size = b.size_lo < 0 ? "unknown size" : FormatBytes(b.size_lo) + "-" + FormatBytes(b.size_hi);
  auto it = labels.find(b.group_name);
  return fmt::format("{} {} in {}", BucketOpName(b), size, it != labels.end() ? it->second : b.group_name);
}

// The time an op counts in: its kernel's launch (the step RowsPerStep gives its kernel),
// else its own start.
TimeNs OpTime(const model::RankTrace& r, uint32_t i) {
  const uint32_t a = r.comms.activity[i];
  if (a != model::kNoIndex && a < r.gpu.size() && r.gpu.launch[a] != model::kNoTime) return r.gpu.launch[a];
  return r.comms.start[i];
}

// What a run's slices are cut by: its communication operations in the window, or its GPU
// activities when it has none; their start times, sorted.
std::vector<TimeNs> SliceTimes(const model::Trace& trace, const JobAnalysis& job) {
  std::vector<TimeNs> times;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rt = trace.ranks[r];
    for (uint32_t i = 0; i < rt.comms.size(); ++i)
      if (job.ranks[r].ops_in_window[i] && rt.comms.start[i] != model::kNoTime) times.push_back(rt.comms.start[i]);
  }
  if (times.empty())
    for (size_t r = 0; r < trace.ranks.size(); ++r)
      for (uint32_t row : job.ranks[r].window.rows) times.push_back(trace.ranks[r].gpu.start[row]);
  std::sort(times.begin(), times.end());
  return times;
}

// The samples a run's quantities are measured over: its summarized steps, or for a trace
// without profiler steps (a recording), slices of its window each holding |per_slice|
// operations (the same number in both runs, so a slice of one is as much work as a slice
// of the other however long each was recorded; a recording's window also holds start-up
// and idle stretches, and equal-time slices left most of them without collectives).
class Samples {
 public:
  Samples(const model::Trace& trace, const JobAnalysis& job, bool by_steps, size_t per_slice) {
    if (by_steps) steps_ = job.SummarizedSteps();
    for (size_t s = 0; s < steps_.size(); ++s) index_[steps_[s]->number] = s;
    if (!steps_.empty()) return;
    const std::vector<TimeNs> times = SliceTimes(trace, job);
    // Slice k starts at bounds_[k - 1] (the first slice at -inf); a last part shorter
    // than half a slice joins the slice before it.
    if (per_slice == 0) return;
    for (size_t k = per_slice; k + per_slice / 2 < times.size(); k += per_slice) bounds_.push_back(times[k]);
  }
  bool over_steps() const { return !steps_.empty(); }
  size_t size() const { return over_steps() ? steps_.size() : bounds_.size() + 1; }
  const std::vector<const JobStepBreakdown*>& steps() const { return steps_; }
  // The sample that holds time |t| on rank |r| (a step of the rank's, or a slice).
  std::optional<size_t> Of(const model::RankTrace& r, TimeNs t) const {
    if (t == model::kNoTime) return std::nullopt;
    if (!over_steps()) return static_cast<size_t>(std::upper_bound(bounds_.begin(), bounds_.end(), t) - bounds_.begin());
    auto it = std::upper_bound(r.steps.begin(), r.steps.end(), t,
                               [](TimeNs v, const model::ProfilerStep& p) { return v < p.start; });
    if (it == r.steps.begin() || t > (it - 1)->end) return std::nullopt;
    auto k = index_.find((it - 1)->number);
    if (k == index_.end()) return std::nullopt;
    return k->second;
  }

 private:
  std::vector<const JobStepBreakdown*> steps_;
  std::unordered_map<int64_t, size_t> index_;
  std::vector<TimeNs> bounds_;
};

// A stable name for each job group of |trace|: its members (a communicator's id differs
// from run to run, and a recording knows no description: "default_pg" in a Kineto trace
// is "ranks 0-3" in the recording of the same job), else its description; groups with the
// same members numbered by their first operation.
std::unordered_map<std::string, std::string> GroupLabels(const model::Trace& trace) {
  std::vector<TimeNs> first(trace.groups.size(), INT64_MAX);
  for (const model::RankTrace& r : trace.ranks)
    for (uint32_t i = 0; i < r.comms.size(); ++i)
      if (const uint32_t g = r.comms.group[i]; g != model::kNoIndex && r.comms.start[i] != model::kNoTime) {
        const uint32_t jg = r.groups[g].job_group;
        if (jg < first.size()) first[jg] = std::min(first[jg], r.comms.start[i]);
      }
  std::vector<uint32_t> order(trace.groups.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return first[x] < first[y]; });
  std::unordered_map<std::string, int> seen;
  std::unordered_map<std::string, std::string> out;
  for (uint32_t gi : order) {
    const model::JobGroup& g = trace.groups[gi];
    std::vector<int> ranks = g.ranks;
    std::sort(ranks.begin(), ranks.end());
    std::string base = !ranks.empty()             ? "ranks " + NumberRanges(ranks)
                       : !g.description.empty() ? g.description
                                                : fmt::format("a group of {}", g.size);
    const int k = ++seen[base];
    out[g.name] = k == 1 ? base : fmt::format("{} #{}", base, k);
  }
  return out;
}

// Every quantity the diff compares, per sample (step or slice).
SeriesSet Extract(const DiffSide& side, bool by_steps, size_t per_slice, DiffRun* run) {
  const model::Trace& trace = *side.trace;
  const JobAnalysis& job = *side.job;
  const Samples samples(trace, job, by_steps, per_slice);
  const std::vector<const JobStepBreakdown*>& steps = samples.steps();
  run->ranks = trace.ranks.size();
  run->over_steps = samples.over_steps();
  run->steps = samples.size();
  const size_t n = samples.size();
  SeriesSet set(n);
  const auto labels = GroupLabels(trace);

  // Step time and its breakdown (mean rank); per slice, the ranks' breakdown in it.
  auto breakdown = [&](size_t s, const TimeBreakdown& t, double ranks) {
    const std::pair<const char*, TimeNs> parts[] = {
        {"compute", t.compute},          {"communication", t.comm}, {"exposed communication", t.exposed_comm},
        {"communication hidden behind compute", t.overlap}, {"memory", t.memory}, {"idle", t.idle}};
    for (const auto& [name, v] : parts) set.Add("breakdown", name, DiffUnit::kTime, s, static_cast<double>(v) / ranks);
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    set.Add("step", "step time", DiffUnit::kTime, s, static_cast<double>(steps[s]->mean.span));
    breakdown(s, steps[s]->mean, 1);
    run->step_times.push_back(static_cast<double>(steps[s]->mean.span));
  }
  // Each rank's GPU rows per sample (by launch, as steps count them).
  std::vector<std::vector<std::vector<uint32_t>>> rows(trace.ranks.size(), std::vector<std::vector<uint32_t>>(n));
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::GpuActivities& g = trace.ranks[r].gpu;
    for (uint32_t row : job.ranks[r].window.rows)
      if (auto s = samples.Of(trace.ranks[r], g.launch[row] != model::kNoTime ? g.launch[row] : g.start[row]))
        rows[r][*s].push_back(row);
  }
  if (!samples.over_steps())
    for (size_t s = 0; s < n; ++s)
      for (size_t r = 0; r < trace.ranks.size(); ++r)
        if (!rows[r][s].empty())
          breakdown(s, ComputeTimeBreakdown(trace.ranks[r], rows[r][s]), static_cast<double>(trace.ranks.size()));

  // Collectives per step: the bucket table of the step's ops, with the arrivals of the
  // whole window (an op's last member is the same whichever step asks).
  std::vector<std::vector<uint8_t>> in_window(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) in_window[r] = job.ranks[r].ops_in_window;
  const Arrivals arrivals = ComputeArrivals(trace, in_window);
  std::vector<std::vector<std::vector<uint8_t>>> in_step(n, std::vector<std::vector<uint8_t>>(trace.ranks.size()));
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rt = trace.ranks[r];
    for (size_t s = 0; s < n; ++s) in_step[s][r].assign(rt.comms.size(), 0);
    for (uint32_t i = 0; i < rt.comms.size(); ++i) {
      if (!in_window[r][i]) continue;
      if (auto s = samples.Of(rt, OpTime(rt, i))) {
        in_step[*s][r][i] = 1;
        // The others' waiting for this op's last member.
        const TimeNs t = arrivals.Transfer(trace, r, i);
        const uint32_t last = arrivals.last_rank[r][i];
        if (t < 0 || last == model::kNoIndex || last == r || (rt.comms.flags[i] & model::kCommNoGpuTiming)) continue;
        const TimeNs d = SaturatingSub(rt.comms.end[i], rt.comms.start[i]);
        const double waited = static_cast<double>(d - std::min(t, d));
        set.Add("rank", fmt::format("the others' waiting for rank {}", trace.ranks[last].rank), DiffUnit::kTime, *s, waited);
        set.Add("rank", kAllWaiting, DiffUnit::kTime, *s, waited);
      }
    }
  }
  for (size_t s = 0; s < n; ++s) {
    const CollectiveAnalysis ca = AnalyzeCollectives(trace, in_step[s], arrivals);
    for (const CollectiveBucket& b : ca.buckets) {
      if (b.count == 0 || b.ranks == 0) continue;
      const std::string name = BucketName(b, labels);
      // Matched by members; shown with the group's description where the run has one.
      const double ranks = static_cast<double>(trace.ranks.size());  // the mean rank, as kernels
      set.Add("collective", name + ": kernel time", DiffUnit::kTime, s, static_cast<double>(b.total) / ranks).desc = b.group_desc;
      set.Add("collective", name + ": transfer time", DiffUnit::kTime, s, static_cast<double>(b.transfer) / ranks).desc =
          b.group_desc;
      if (b.transfer_busbw_gbps > 0)
        set.Push("collective", name + ": busbw", DiffUnit::kBandwidth, b.transfer_busbw_gbps).desc = b.group_desc;
    }
  }

  // Kernels (compute and memory; communication is above): the mean rank's time per step.
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rt = trace.ranks[r];
    const model::GpuActivities& g = rt.gpu;
    for (size_t s = 0; s < n; ++s)
      for (uint32_t row : rows[r][s]) {
        if (g.cls[row] == model::ActivityClass::kCommunication || g.kind[row] == model::ActivityKind::kSync) continue;
        set.Add("kernel", std::string(rt.strings.Get(g.name[row])), DiffUnit::kTime, s,
                static_cast<double>(SaturatingSub(g.end[row], g.start[row])) / static_cast<double>(trace.ranks.size()));
      }
  }

  // The what-if S per replayed step.
  if (job.replay.done)
    for (double s : job.replay.step_slowdown) set.Push("whatif", "slowdown S (no-delay step over ideal)", DiffUnit::kRatio, s);

  // Who the run's verdict blames: the replay's first part, else the top straggler.
  if (job.replay.done && !job.replay.parts.empty() && job.replay.parts.front().gain > 0) {
    run->straggler = job.replay.parts.front().label();
    run->straggler_gain = job.replay.parts.front().gain;
  } else if (!job.cross_rank.stragglers.empty() && job.cross_rank.stragglers.front().consistent) {
    run->straggler = fmt::format("rank {}", job.cross_rank.stragglers.front().rank);
  }
  // What it can measure (SeriesSet::Measured).
  bool gpu = false, comm = false;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    gpu = gpu || !job.ranks[r].window.rows.empty();
    for (uint8_t in : job.ranks[r].ops_in_window) comm = comm || in;
  }
  if (samples.over_steps()) set.Measures("step");
  if (gpu) set.Measures("breakdown"), set.Measures("kernel");
  if (comm) set.Measures("collective"), set.Measures("rank");
  if (job.replay.done) set.Measures("whatif");
  std::set<std::string> formats;
  for (const model::RankTrace& r : trace.ranks) formats.insert(r.format);
  for (const std::string& f : formats) run->formats += (run->formats.empty() ? "" : ", ") + f;
  return set;
}

DiffRow Compare(const Series* a, const Series* b, const DiffOptions& options) {
  const Series& any = a ? *a : *b;
  DiffRow row;
  row.section = any.section, row.name = any.name, row.unit = any.unit;
  // Shown with the group's description: the runs' own when they differ.
  row.shown = any.name;
  const std::string da = a ? a->desc : "", db = b ? b->desc : "";
  const std::string desc = da == db || db.empty() ? da : da.empty() ? db : "A: " + da + "; B: " + db;
  if (const size_t colon = any.name.rfind(": "); !desc.empty() && colon != std::string::npos)
    row.shown = any.name.substr(0, colon) + " (" + desc + ")" + any.name.substr(colon);
  static const std::vector<double> kNone;
  const std::vector<double>& va = a ? a->values : kNone;
  const std::vector<double>& vb = b ? b->values : kNone;
  row.steps_a = va.size(), row.steps_b = vb.size();
  row.a = Mean(va), row.b = Mean(vb);
  row.change = row.b - row.a;
  row.relative = row.a != 0 ? row.change / std::abs(row.a) : 0;
  row.interval = BootstrapMeanDifference(va, vb, options.level);
  const bool large = row.a != 0 ? std::abs(row.relative) >= options.min_change : row.b != 0;
  row.beyond_noise = row.interval && !row.interval->Holds(0) && large;
  // The rank section sums the waiting ranks' time: rank-time, not the step's.
  if (row.unit == DiffUnit::kTime && row.section != "rank") row.step_cost = row.change;
  return row;
}

// A dense series a run lacks: zeros, one per step it covers (it spent no time on it).
Series Zeros(const Series& like, size_t steps) {
  return {like.section, like.name, like.desc, like.unit, true, std::vector<double>(steps, 0.0)};
}

}  // namespace

std::vector<const DiffRow*> RunDiff::Changes() const {
  std::vector<const DiffRow*> out;
  for (const DiffRow& r : rows)
    if (r.beyond_noise) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const DiffRow* x, const DiffRow* y) {
    if (std::abs(x->step_cost) != std::abs(y->step_cost)) return std::abs(x->step_cost) > std::abs(y->step_cost);
    return std::abs(x->relative) > std::abs(y->relative);
  });
  return out;
}

RunDiff DiffRuns(const DiffSide& a, const DiffSide& b, const DiffOptions& options) {
  RunDiff out;
  // Per step where both runs have steps; else both cut into slices of as many operations
  // each (a step of one and a slice of the other do not compare): |options.slices| of the
  // shorter run.
  const bool by_steps = !a.job->SummarizedSteps().empty() && !b.job->SummarizedSteps().empty();
  size_t per_slice = 0;
  if (!by_steps) {
    const size_t na = SliceTimes(*a.trace, *a.job).size(), nb = SliceTimes(*b.trace, *b.job).size();
    per_slice = options.slices > 0 ? std::min(na, nb) / options.slices : 0;
  }
  const SeriesSet sa = Extract(a, by_steps, per_slice, &out.a);
  const SeriesSet sb = Extract(b, by_steps, per_slice, &out.b);
  if (out.a.ranks != out.b.ranks)
    out.warnings.push_back(fmt::format("A has {} ranks, B {}: per-rank means of different jobs are compared", out.a.ranks,
                                       out.b.ranks));
  if (out.a.formats != out.b.formats)
    out.warnings.push_back(fmt::format("A is {}, B {}: only what both record is compared", out.a.formats, out.b.formats));
  if (!by_steps && (a.job->SummarizedSteps().empty() != b.job->SummarizedSteps().empty()))
    out.warnings.push_back("one run has profiler steps, the other none: both are compared over slices of equal "
                           "operation counts, not per step");
  std::vector<DiffRow> rows;
  auto compare = [&](const Series* x, const Series* y) {
    // A dense quantity one run lacks, where that run measures its kind, is zero there, so
    // its change is all of it; where it cannot (a recording's kernels), unknown.
    std::optional<Series> zx, zy;
    if (!x && y->dense && sa.Measured(y->section)) zx = Zeros(*y, sa.steps()), x = &*zx;
    if (!y && x->dense && sb.Measured(x->section)) zy = Zeros(*x, sb.steps()), y = &*zy;
    DiffRow row = Compare(x, y, options);
    row.in_a = !zx && sa.Find(row.section, row.name), row.in_b = !zy && sb.Find(row.section, row.name);
    row.known_a = x != nullptr, row.known_b = y != nullptr;
    rows.push_back(std::move(row));
  };
  for (const Series& x : sa.list()) compare(&x, sb.Find(x.section, x.name));
  for (const Series& y : sb.list())
    if (!sa.Find(y.section, y.name)) compare(nullptr, &y);
  // A bucket's bandwidth costs what its transfer time changed.
  std::unordered_map<std::string, double> transfer_change;
  for (const DiffRow& r : rows)
    if (r.section == "collective" && r.name.ends_with(": transfer time"))
      transfer_change[r.name.substr(0, r.name.size() - 15)] = r.change;
  for (DiffRow& r : rows)
    if (r.unit == DiffUnit::kBandwidth && r.name.ends_with(": busbw"))
      if (auto it = transfer_change.find(r.name.substr(0, r.name.size() - 7)); it != transfer_change.end())
        r.step_cost = it->second;
  // Who arrives last changes from run to run in a job whose ranks are balanced: two runs
  // of one DDP job, rank 0 never last in one, the others waited 33 ms per step for it in
  // the other, and that run's verdict called it a consistent straggler. A rank's row
  // counts as changed only when the job's waiting for late ranks, all of it, changed too.
  bool all_waiting_changed = false;
  for (const DiffRow& r : rows)
    if (r.section == "rank" && r.name == kAllWaiting) all_waiting_changed = r.beyond_noise;
  for (DiffRow& r : rows)
    if (r.section == "rank" && r.name != kAllWaiting) r.beyond_noise = r.beyond_noise && all_waiting_changed;
  // Kernels: the longest in either run; ranks: those whose waiting changed most.
  auto keep_top = [&](const char* section, size_t keep, auto&& weight) {
    std::vector<DiffRow*> of;
    for (DiffRow& r : rows)
      if (r.section == section) of.push_back(&r);
    if (of.size() <= keep) return;
    std::sort(of.begin(), of.end(), [&](DiffRow* x, DiffRow* y) { return weight(*x) > weight(*y); });
    for (size_t i = keep; i < of.size(); ++i) of[i]->section.clear();
    std::erase_if(rows, [](const DiffRow& r) { return r.section.empty(); });
  };
  keep_top("kernel", options.kernels, [](const DiffRow& r) { return std::max(r.a, r.b); });
  keep_top("rank", options.ranks, [](const DiffRow& r) {
    return r.name == kAllWaiting ? INFINITY : std::abs(r.change) + std::max(r.a, r.b) * 1e-9;
  });
  // By section, beyond noise first, then the largest change (time per step, else relative).
  auto section_of = [](const DiffRow& r) {
    return static_cast<size_t>(std::find(std::begin(kSections), std::end(kSections), r.section) - std::begin(kSections));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const DiffRow& x, const DiffRow& y) {
    if (section_of(x) != section_of(y)) return section_of(x) < section_of(y);
    if (x.beyond_noise != y.beyond_noise) return x.beyond_noise;
    const double cx = std::abs(x.step_cost), cy = std::abs(y.step_cost);
    if (cx != cy) return cx > cy;
    return std::abs(x.relative) > std::abs(y.relative);
  });
  out.rows = std::move(rows);
  return out;
}

}  // namespace commlens::analysis
