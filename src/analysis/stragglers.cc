// Who arrives last at collectives, what it costs the others, and why (cross_rank.h).
#include <algorithm>
#include <map>

#include "analysis/arrivals.h"
#include "analysis/cross_rank_parts.h"
#include "analysis/gpu_stretch.h"
#include "common/saturating.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

// A late arrival smaller than this is clock noise, not a cause to explain.
constexpr TimeNs kExplainedLateness = 10'000;
// Consistently late: last at 1.5 times as many collectives as chance gives it (1/n of a
// group of n), and at least this many times.
constexpr double kConsistentOverChance = 1.5;
constexpr uint64_t kMinConsistent = 3;
// One cause explains the lateness when it holds this share of the positive excess.
constexpr double kSingleCause = 0.7;

TimeNs Median(std::vector<TimeNs> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Acc {
  Straggler s;
  TimeNs lateness_sum = 0;
  std::map<int64_t, TimeNs> lateness_in_step;  // per profiler step
  TimeNs explained_lateness = 0;
  std::map<std::string_view, double> kernel_excess;  // late rank's time - others' mean
};

// Adds to |a| (the late rank's) what the stretch before collective k held on the late
// member |last| beyond the others' median: compute, idle, other groups' communication,
// and per kernel name the late rank's time minus the others' mean.
void Explain(const model::MatchedOps& m, uint32_t k, const std::vector<uint32_t>& members, uint32_t last,
             const std::vector<uint32_t>& previous, StretchSource& gpu, Acc* a) {
  std::vector<TimeNs> compute, idle, other;
  std::map<std::string_view, TimeNs> late_kernels, other_kernels;
  Stretch late;
  for (uint32_t j : members) {
    const uint32_t r = m.rank_index[j];
    auto& names = j == last ? late_kernels : other_kernels;
    Stretch s = gpu.Measure(r, m.end[previous[r]], m.start[j], m.group[k],
                            [&](std::string_view n, TimeNs t) { names[n] += t; });
    if (j == last) {
      late = s;
      continue;
    }
    compute.push_back(s.compute);
    idle.push_back(s.idle);
    other.push_back(s.other_comm);
  }
  a->s.excess_compute += late.compute - Median(compute);
  a->s.excess_idle += late.idle - Median(idle);
  a->s.excess_other_comm += late.other_comm - Median(other);
  const double others = static_cast<double>(members.size() - 1);
  for (const auto& [name, t] : late_kernels) a->kernel_excess[name] += static_cast<double>(t);
  for (const auto& [name, t] : other_kernels) a->kernel_excess[name] -= static_cast<double>(t) / others;
}

}  // namespace

namespace {

// The profiler step (its number) in which rank |r| launched op |op|, or -1.
int64_t StepOf(const model::RankTrace& r, uint32_t op) {
  const TimeNs t = Launched(r, op);
  auto it = std::upper_bound(r.steps.begin(), r.steps.end(), t,
                             [](TimeNs v, const model::ProfilerStep& s) { return v < s.start; });
  if (it == r.steps.begin()) return -1;
  --it;
  return t <= it->end ? it->number : -1;
}

}  // namespace

std::vector<Straggler> FindStragglers(const model::Trace& trace, const InWindow& in_window, const StepNoise& noise,
                                      StretchSource& gpu, std::vector<CrossRankStep>* per_step) {
  const size_t steps = noise.steps;
  // Per step number: the step's row, and per rank index its last arrivals and their cost.
  struct StepAcc {
    CrossRankStep row;
    std::map<uint32_t, std::pair<uint64_t, TimeNs>> last;
  };
  std::map<int64_t, StepAcc> by_step;
  const model::MatchedOps& m = trace.matched;
  std::vector<Acc> acc(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) acc[r].s.rank = trace.ranks[r].rank;
  std::vector<uint64_t> matched(trace.ranks.size(), 0);
  std::vector<double> chance(trace.ranks.size(), 0);

  std::vector<uint32_t> members;
  // The member row of each rank in the previous collective of the same group.
  std::vector<uint32_t> previous(trace.ranks.size(), model::kNoIndex);
  for (uint32_t k = 0; k < m.size(); ++k) {
    if (k == 0 || m.group[k] != m.group[k - 1] || m.kind[k] != m.kind[k - 1])
      std::fill(previous.begin(), previous.end(), model::kNoIndex);
    InWindowMembers(trace, in_window, k, &members);
    if (m.kind[k] != model::MatchKind::kCollective || members.size() < 2 ||
        members.size() != m.members(k) || !model::AllGpuTimed(trace, k)) {
      for (uint32_t j : members) previous[m.rank_index[j]] = j;
      continue;
    }
    for (uint32_t j : members) {
      ++matched[m.rank_index[j]];
      chance[m.rank_index[j]] += 1.0 / static_cast<double>(members.size());
    }
    // The last to arrive, and the next latest start. Where NCCL's kernel phases are known
    // (arrivals.h), by them: the last waited least, and each member's initial sync beyond
    // the last one's is how much later the last came; no clock enters.
    const uint32_t by_phases = LastByPhases(trace, k);
    auto sync = [&](uint32_t j) { return trace.ranks[m.rank_index[j]].comms.initial_sync[m.row[j]]; };
    // How long before the last member member j arrived.
    auto ahead = [&](uint32_t j, uint32_t last) {
      return by_phases != model::kNoIndex ? SaturatingSub(sync(j), sync(last)) : SaturatingSub(m.start[last], m.start[j]);
    };
    uint32_t last = by_phases;
    if (last == model::kNoIndex) {
      last = members[0];
      for (uint32_t j : members)
        if (m.start[j] > m.start[last]) last = j;
    }
    TimeNs lateness = INT64_MAX, spread = 0;
    for (uint32_t j : members)
      if (j != last) lateness = std::min(lateness, ahead(j, last)), spread = std::max(spread, ahead(j, last));
    Acc& a = acc[m.rank_index[last]];
    ++a.s.last_arrivals;
    a.lateness_sum += lateness;
    TimeNs cost = 0;
    for (uint32_t j : members)
      if (j != last) cost += std::clamp(ahead(j, last), TimeNs{0}, m.end[j] - m.start[j]);
    a.s.cost_to_others += cost;
    const uint32_t j0 = members.front();
    if (const int64_t step = StepOf(trace.ranks[m.rank_index[j0]], m.row[j0]); step >= 0) {
      StepAcc& st = by_step[step];
      st.row.number = step;
      ++st.row.collectives;
      st.row.cost_to_others += cost;
      st.row.max_skew = std::max(st.row.max_skew, spread);
      auto& mine = st.last[m.rank_index[last]];
      ++mine.first;
      mine.second += cost;
      a.lateness_in_step[step] += lateness;
    }
    if (cost > a.s.worst_cost) {
      a.s.worst_cost = cost;
      a.s.worst_seq = m.seq[k];
      a.s.worst_group = trace.groups[m.group[k]].name;
    }

    // Why: the stretch before this collective on every member, back to the previous one.
    const bool explain = lateness >= kExplainedLateness && trace.ranks[m.rank_index[last]].GpuActivityCount() > 0 &&
                         std::all_of(members.begin(), members.end(),
                                     [&](uint32_t j) { return previous[m.rank_index[j]] != model::kNoIndex; });
    if (explain) {
      Explain(m, k, members, last, previous, gpu, &a);
      a.explained_lateness += lateness;
    }
    for (uint32_t j : members) previous[m.rank_index[j]] = j;
  }

  std::vector<Straggler> out;
  for (size_t r = 0; r < acc.size(); ++r) {
    Acc& a = acc[r];
    if (a.s.last_arrivals == 0) continue;
    a.s.matched = matched[r];
    a.s.chance_arrivals = chance[r];
    a.s.consistent = a.s.last_arrivals >= kMinConsistent &&
                     static_cast<double>(a.s.last_arrivals) >= kConsistentOverChance * chance[r];
    a.s.mean_lateness = a.lateness_sum / static_cast<TimeNs>(a.s.last_arrivals);
    a.s.delay = a.lateness_sum;
    if (steps > 0) {
      a.s.cost_per_step = static_cast<double>(a.s.cost_to_others) / static_cast<double>(steps);
      // A step cannot be delayed by more than it lasts: late arrivals that follow one
      // another without the others catching up add lateness that is one delay.
      double delay = 0;
      for (const auto& [step, l] : a.lateness_in_step)
        delay += static_cast<double>(noise.median > 0 ? std::min(l, noise.median) : l);
      a.s.delay_per_step = delay / static_cast<double>(steps);
    }
    const TimeNs parts[3] = {a.s.excess_compute, a.s.excess_idle, a.s.excess_other_comm};
    double positive = 0;
    for (TimeNs p : parts) positive += static_cast<double>(std::max<TimeNs>(p, 0));
    for (int k = 0; k < 3; ++k)
      a.s.cause_share[k] = positive > 0 ? static_cast<double>(std::max<TimeNs>(parts[k], 0)) / positive : 0;
    const TimeNs best = std::max({a.s.excess_compute, a.s.excess_idle, a.s.excess_other_comm});
    if (trace.ranks[r].GpuActivityCount() == 0) a.s.cause = LateCause::kUnknown;  // no kernel timeline to look at
    else if (a.explained_lateness == 0) a.s.cause = LateCause::kNone;  // only by noise
    else if (best * 4 < a.explained_lateness) a.s.cause = LateCause::kUnknown;
    else if (best == a.s.excess_compute) a.s.cause = LateCause::kCompute;
    else if (best == a.s.excess_idle) a.s.cause = LateCause::kHostIdle;
    else a.s.cause = LateCause::kOtherCollective;
    a.s.mixed = (a.s.cause == LateCause::kCompute || a.s.cause == LateCause::kHostIdle ||
                 a.s.cause == LateCause::kOtherCollective) &&
                *std::max_element(a.s.cause_share, a.s.cause_share + 3) < kSingleCause;
    if (a.s.cause == LateCause::kCompute || (a.s.mixed && a.s.cause_share[0] > 0)) {
      std::vector<std::pair<double, std::string_view>> ranked;
      for (const auto& [name, excess] : a.kernel_excess)
        if (excess > 0) ranked.push_back({excess, name});
      std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (size_t i = 0; i < ranked.size() && i < 3; ++i) a.s.kernels.emplace_back(ranked[i].second);
    }
    out.push_back(std::move(a.s));
  }
  if (per_step != nullptr) {
    per_step->clear();
    for (auto& [number, st] : by_step) {
      for (const auto& [r, counts] : st.last)
        if (counts.first > st.row.most_last_count ||
            (counts.first == st.row.most_last_count && counts.second > st.row.most_last_cost)) {
          st.row.most_last_rank = trace.ranks[r].rank;
          st.row.most_last_count = counts.first;
          st.row.most_last_cost = counts.second;
        }
      per_step->push_back(st.row);
    }
  }
  std::sort(out.begin(), out.end(), [](const Straggler& x, const Straggler& y) {
    if (x.delay != y.delay) return x.delay > y.delay;
    return x.cost_to_others > y.cost_to_others || (x.cost_to_others == y.cost_to_others && x.rank < y.rank);
  });
  return out;
}

}  // namespace commlens::analysis
