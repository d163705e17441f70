// Clock alignment across clock groups (hosts, or every rank) from matched collectives.
//
// The model: a ring, tree or all-to-all collective cannot end on one rank before every
// rank has started it (each rank needs data from all the others). In true time, for
// ranks a and b in one collective: start_a <= end_b. Observed times carry their clock's
// offset (t_obs = t_true + off), so
//     off_b - off_a <= end_b - start_a     and     off_a - off_b <= end_a - start_b,
// an interval for off_b - off_a from every collective the two share. Intersecting the
// intervals of many collectives narrows it; its half-width is an honest error bound.
// The point estimate is the median of (end_b - end_a) (ranks of one collective finish
// within microseconds of each other), clamped into the interval. A few collectives whose
// timing is off (a kernel that ended late on one rank) would make the intersection empty:
// the tightest 1% of the constraints on each side are set aside as outliers.
//
// Each clock group is estimated against the reference group (the one of the first rank)
// from the collectives that span both; a group that shares none with it is estimated in a
// later round against the groups aligned before it (breadth first), its bound adding
// theirs; a group no chain of collectives links keeps offset 0 and bound -1, and a note
// says so. When applied, every time of the group's ranks moves by
// -offset, and the matched-ops table is rebuilt.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "passes/passes.h"

namespace commlens::passes {

namespace {

using model::TimeNs;

bool IsSymmetric(model::CommOp op) {
  // One-sided or rooted ops (send/recv, broadcast, reduce) do not need every rank's data.
  return op == model::CommOp::kAllReduce || op == model::CommOp::kAllGather ||
         op == model::CommOp::kReduceScatter || op == model::CommOp::kAllToAll;
}

// The k-th smallest value (k from 0), or the largest when there are fewer.
TimeNs KthSmallest(std::vector<TimeNs>* v, size_t k) {
  k = std::min(k, v->size() - 1);
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(k), v->end());
  return (*v)[k];
}

// Starts and ends of one clock group's members in one collective.
struct Span {
  TimeNs last_start = INT64_MIN, first_end = INT64_MAX;
  void Add(TimeNs start, TimeNs end) { last_start = std::max(last_start, start), first_end = std::min(first_end, end); }
  bool empty() const { return last_start == INT64_MIN; }
};

struct Samples {
  std::vector<TimeNs> upper;  // off_g - off_ref <= end_g - start_ref
  std::vector<TimeNs> lower;  // off_g - off_ref >= -(end_ref - start_g) = start_g - end_ref
  std::vector<TimeNs> end_gap;
};

void Estimate(Samples* s, model::ClockOffset* out) {
  if (s->end_gap.empty()) {
    out->bound = -1;
    return;
  }
  const size_t outliers = s->upper.size() / 100;  // the tightest 1% on each side
  TimeNs hi = KthSmallest(&s->upper, outliers);
  for (TimeNs& v : s->lower) v = -v;
  TimeNs lo = -KthSmallest(&s->lower, outliers);
  TimeNs mid = KthSmallest(&s->end_gap, s->end_gap.size() / 2);
  out->samples = s->end_gap.size();
  out->consistent = lo <= hi;
  if (!out->consistent) std::swap(lo, hi);  // the constraints conflict: the bound is a guess
  out->offset = std::clamp(mid, lo, hi);
  out->bound = std::max(out->offset - lo, hi - out->offset);
}

}  // namespace

void ShiftRankTimes(model::RankTrace* r, TimeNs by) {
  auto move = [by](std::vector<TimeNs>* column) {
    for (TimeNs& t : *column)
      if (t != model::kNoTime) t -= by;
  };
  move(&r->gpu.start);
  move(&r->gpu.end);
  move(&r->gpu.launch);
  move(&r->host.start);
  move(&r->host.end);
  move(&r->annotations.start);
  move(&r->annotations.end);
  move(&r->flows.time);
  move(&r->comms.start);
  move(&r->comms.end);
  move(&r->comms.launch);
  for (TimeNs& t : r->comms.enqueue)
    if (t != 0) t -= by;
  for (model::ProfilerStep& s : r->steps) s.start -= by, s.end -= by;
  for (model::CounterSeries& c : r->counters) move(&c.time);
  if (r->alive_until != model::kNoTime) r->alive_until -= by;
  if (r->gpu_last_end != model::kNoTime) r->gpu_last_end -= by;
}

namespace {

// Estimates each clock group's offset against group 0's from the matched collectives and
// applies it (|group_of[r]|: the group of rank index r). Notes say what could not be
// bounded.
void AlignGroups(model::Trace* trace, const std::vector<uint32_t>& group_of, uint32_t groups, bool per_rank) {
  model::ClockAlignment& clock = trace->clock;
  const size_t n = trace->ranks.size();
  // Rounds: in the first, each group against the reference group 0, from every symmetric
  // collective that has members in both; in each later one, the groups still unaligned
  // against every group aligned so far (their times corrected by their offsets), so a
  // host that shares collectives only with a third host is aligned through it. Such an
  // offset's bound adds the largest bound of the groups it was aligned through.
  std::vector<model::ClockOffset> per_group(groups);
  std::vector<int> round_of(groups, -1);  // -1: not aligned yet
  round_of[0] = 0;
  std::vector<TimeNs> ref_bound(groups, 0);  // per group: the largest bound of the groups it was measured against
  std::map<uint32_t, Span> spans;  // per unaligned clock group, in one collective
  const model::MatchedOps& m = trace->matched;
  for (int round = 1;; ++round) {
    std::vector<Samples> samples(groups);
    std::fill(ref_bound.begin(), ref_bound.end(), 0);
    for (size_t k = 0; k < m.size(); ++k) {
      if (m.kind[k] != model::MatchKind::kCollective || m.members(k) < 2 ||
          !model::AllGpuTimed(*trace, k))
        continue;
      const uint32_t j0 = m.first[k];
      if (!IsSymmetric(trace->ranks[m.rank_index[j0]].comms.op[m.row[j0]])) continue;
      // Every pair (a aligned, b of group g) bounds off_g - off_ref to
      // [start_b - end_a, end_b - start_a]; the tightest pair gives
      // [latest start(g) - earliest end(ref), earliest end(g) - latest start(ref)].
      Span ref;
      TimeNs through = 0;
      spans.clear();
      for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
        const uint32_t g = group_of[m.rank_index[j]];
        if (round_of[g] >= 0) {
          const TimeNs off = per_group[g].offset;
          ref.Add(m.start[j] - off, m.end[j] - off);
          through = std::max(through, per_group[g].bound);
        } else {
          spans[g].Add(m.start[j], m.end[j]);
        }
      }
      if (ref.empty()) continue;
      for (const auto& [g, sp] : spans) {
        samples[g].upper.push_back(sp.first_end - ref.last_start);
        samples[g].lower.push_back(sp.last_start - ref.first_end);
        samples[g].end_gap.push_back(sp.first_end - ref.first_end);
        ref_bound[g] = std::max(ref_bound[g], through);
      }
    }
    bool progress = false;
    for (uint32_t g = 1; g < groups; ++g) {
      if (round_of[g] >= 0 || samples[g].end_gap.empty()) continue;
      Estimate(&samples[g], &per_group[g]);
      per_group[g].bound += ref_bound[g];
      round_of[g] = round;
      progress = true;
    }
    if (!progress) break;
  }
  for (uint32_t g = 1; g < groups; ++g)
    if (round_of[g] < 0) per_group[g].bound = -1;
  for (size_t r = 0; r < n; ++r) {
    const model::ClockOffset& e = per_group[group_of[r]];
    clock.ranks[r].offset = e.offset;
    clock.ranks[r].bound = e.bound;
    clock.ranks[r].samples = e.samples;
    clock.ranks[r].consistent = e.consistent;
    const bool first_of_group = std::find(group_of.begin(), group_of.begin() + static_cast<std::ptrdiff_t>(r),
                                          group_of[r]) == group_of.begin() + static_cast<std::ptrdiff_t>(r);
    if (!first_of_group) continue;  // one note per clock
    const std::string who = per_rank ? "rank " + std::to_string(trace->ranks[r].rank)
                                     : "host " + trace->ranks[r].hostname;
    if (e.bound < 0)
      clock.notes.push_back(who + ": no collective links its clock to rank " + std::to_string(trace->ranks[0].rank) +
                            "'s; its times are left as they are");
    else if (round_of[group_of[r]] > 1)
      clock.notes.push_back(who + ": shares no collective with rank " + std::to_string(trace->ranks[0].rank) +
                            "'s clock; aligned through clocks aligned before it (its bound includes theirs)");
    else if (!e.consistent)
      clock.notes.push_back(who + ": the collectives' timing constraints conflict (a collective ended before "
                                  "a member started it, beyond the outliers set aside); the offset is an estimate "
                                  "and its bound is not guaranteed");
  }
  for (size_t r = 0; r < n; ++r)
    if (clock.ranks[r].offset != 0) ShiftRankTimes(&trace->ranks[r], clock.ranks[r].offset);
  // Host-owned series (a node's sampler: NICs, GPUs) share their host's clock: they move
  // with the first rank of that host.
  for (model::CounterSeries& c : trace->counters) {
    for (size_t r = 0; r < n; ++r) {
      if (trace->ranks[r].hostname != c.host) continue;
      if (const TimeNs by = clock.ranks[r].offset; by != 0)
        for (TimeNs& t : c.time) t -= by;
      break;
    }
  }
  clock.applied = true;
  clock.aligned_per = per_rank ? "ranks" : "hosts";
  MatchOps(trace);  // starts and ends moved
}

// Undoes AlignGroups: every time back on its own clock, the offsets cleared.
void UndoAlignment(model::Trace* trace) {
  model::ClockAlignment& clock = trace->clock;
  for (model::CounterSeries& c : trace->counters)  // they moved with their host's first rank
    for (size_t r = 0; r < trace->ranks.size(); ++r) {
      if (trace->ranks[r].hostname != c.host) continue;
      if (const TimeNs by = clock.ranks[r].offset; by != 0)
        for (TimeNs& t : c.time) t += by;
      break;
    }
  for (size_t r = 0; r < trace->ranks.size(); ++r) {
    if (clock.ranks[r].offset != 0) ShiftRankTimes(&trace->ranks[r], -clock.ranks[r].offset);
    clock.ranks[r] = {trace->ranks[r].rank, trace->ranks[r].hostname, 0, 0, 0};
  }
  clock.notes.clear();
  clock.applied = false;
  clock.aligned_per.clear();
  MatchOps(trace);
}

std::string Dur(TimeNs ns) {
  char buf[32];
  if (ns < 1'000'000) std::snprintf(buf, sizeof(buf), "%.1f us", static_cast<double>(ns) / 1e3);
  else if (ns < 1'000'000'000) std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// "collective #7 of group 0 ended on rank 1 2.50 ms before rank 3 started it (4 of 28
// collectives checked)".
std::string Evidence(const model::CausalityCheck& c) {
  return "collective #" + std::to_string(c.worst_seq) + " of group " + c.worst_group + " ended on rank " +
         std::to_string(c.ended_rank) + " " + Dur(c.worst) + " before rank " + std::to_string(c.started_rank) +
         " started it (" + std::to_string(c.violations) + " of " + std::to_string(c.checked) +
         " collectives checked break the rule)";
}

}  // namespace

model::CausalityCheck CheckCausality(const model::Trace& trace) {
  model::CausalityCheck c;
  const model::MatchedOps& m = trace.matched;
  for (size_t k = 0; k < m.size(); ++k) {
    if (m.kind[k] != model::MatchKind::kCollective || m.members(k) < 2 || !model::AllGpuTimed(trace, k)) continue;
    const uint32_t j0 = m.first[k];
    if (!IsSymmetric(trace.ranks[m.rank_index[j0]].comms.op[m.row[j0]])) continue;
    uint32_t last_start = j0, first_end = j0;
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j) {
      if (m.start[j] > m.start[last_start]) last_start = j;
      if (m.end[j] < m.end[first_end]) first_end = j;
    }
    ++c.checked;
    const TimeNs gap = m.start[last_start] - m.end[first_end];
    if (gap <= model::CausalityCheck::kCausalitySlack) continue;
    ++c.violations;
    if (gap > c.worst) {
      c.worst = gap;
      c.worst_group = trace.groups[m.group[k]].name;
      c.worst_seq = m.seq[k];
      c.ended_rank = trace.ranks[m.rank_index[first_end]].rank;
      c.started_rank = trace.ranks[m.rank_index[last_start]].rank;
    }
  }
  return c;
}

std::string HostFromFileName(const std::string& path) {
  // PyTorch's tensorboard_trace_handler writes <worker>.<ms>.pt.trace.json[.gz], with the
  // worker named <hostname>_<pid> unless the job names it.
  std::string name = path.substr(path.find_last_of('/') + 1);
  for (const char* suffix : {".pt.trace.json.gz", ".pt.trace.json"}) {
    const std::string_view sv(suffix);
    if (name.size() > sv.size() && name.compare(name.size() - sv.size(), sv.size(), sv) == 0) {
      name.resize(name.size() - sv.size());
      const size_t dot = name.find_last_of('.');
      if (dot == std::string::npos) return "";
      name.resize(dot);
      const size_t us = name.find_last_of('_');
      if (us == std::string::npos || us == 0 || us + 1 == name.size()) return "";
      for (size_t i = us + 1; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return "";
      return name.substr(0, us);
    }
  }
  return "";
}

void AlignClocks(model::Trace* trace, model::AlignMode mode) {
  model::ClockAlignment& clock = trace->clock;
  clock = {};
  clock.mode = mode;
  const size_t n = trace->ranks.size();
  if (n == 0) return;
  for (size_t r = 0; r < n; ++r) clock.ranks.push_back({trace->ranks[r].rank, trace->ranks[r].hostname, 0, 0, 0});
  clock.raw = CheckCausality(*trace);
  std::vector<uint32_t> per_rank(n);
  for (size_t r = 0; r < n; ++r) per_rank[r] = static_cast<uint32_t>(r);
  // Clock groups by host, when every rank names one (ranks without a host name would
  // otherwise share one made-up clock).
  std::map<std::string, uint32_t> hosts;
  std::vector<uint32_t> per_host(n);
  bool hosts_known = true;
  for (size_t r = 0; r < n; ++r) {
    hosts_known &= !trace->ranks[r].hostname.empty();
    per_host[r] = hosts.emplace(trace->ranks[r].hostname, static_cast<uint32_t>(hosts.size())).first->second;
  }
  switch (mode) {
    case model::AlignMode::kNone:
      if (clock.raw.violated())
        clock.notes.push_back("--align none: the raw clocks differ (" + Evidence(clock.raw) +
                              "); the cross-rank timings compare clocks that disagree");
      break;
    case model::AlignMode::kCollectives:
      if (n > 1) AlignGroups(trace, per_rank, static_cast<uint32_t>(n), true);
      break;
    case model::AlignMode::kAuto:
      if (hosts_known && hosts.size() > 1) {
        AlignGroups(trace, per_host, static_cast<uint32_t>(hosts.size()), false);
        if (CheckCausality(*trace).violated()) {
          // The ranks of one host disagree too: each rank gets its own clock.
          const model::CausalityCheck after = CheckCausality(*trace);
          UndoAlignment(trace);
          AlignGroups(trace, per_rank, static_cast<uint32_t>(n), true);
          clock.aligned_by_check = true;
          clock.notes.insert(clock.notes.begin(), "clocks checked: aligned per host, " + Evidence(after) +
                                                      "; so every rank was aligned on its own");
        }
      } else if (clock.raw.violated() && n > 1) {
        AlignGroups(trace, per_rank, static_cast<uint32_t>(n), true);
        clock.aligned_by_check = true;
        clock.notes.insert(clock.notes.begin(),
                           "clocks checked: the ranks' clocks differ (" + Evidence(clock.raw) +
                               "); aligned every rank from matched collectives (--align none keeps the raw clocks)");
      } else if (n > 1 && hosts.size() == 1) {
        clock.notes.push_back(
            "clocks checked: " +
            (clock.raw.violations == 0
                 ? "no collective ends on one rank before another starts it (" + std::to_string(clock.raw.checked) +
                       " checked)"
                 : std::to_string(clock.raw.violations) + " of " + std::to_string(clock.raw.checked) +
                       " collectives end on one rank before another starts it, within the 1% set aside as timing noise") +
            ", and " +
            (hosts_known ? "the ranks share host " + trace->ranks[0].hostname : std::string("the traces name no host")) +
            ": the ranks are compared on the clocks they give (--align collectives aligns every rank)");
      }
      break;
  }
  clock.aligned = clock.applied ? CheckCausality(*trace) : clock.raw;
}

}  // namespace commlens::passes
