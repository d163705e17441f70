#include "analysis/cross_rank.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "analysis/cross_rank_parts.h"
#include "model/collective.h"

namespace commlens::analysis {

std::string_view LateCauseName(LateCause c) {
  switch (c) {
    case LateCause::kNone: return "none";
    case LateCause::kCompute: return "compute";
    case LateCause::kHostIdle: return "host_idle";
    case LateCause::kOtherCollective: return "other_collective";
    case LateCause::kUnknown: return "unknown";
  }
  return "unknown";
}

std::vector<ProtocolRow> ProtocolsUsed(const model::Trace& trace, const InWindow& in_window,
                                       const CollectiveAnalysis& collectives) {
  using Key = std::tuple<std::string, model::CommOp, int64_t>;
  using Choice = std::tuple<std::string, std::string, int>;
  std::map<Key, std::map<Choice, uint64_t>> seen;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rank = trace.ranks[r];
    const model::CommOps& c = rank.comms;
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (!in_window[r][i] || (c.algorithm[i].value == 0 && c.protocol[i].value == 0)) continue;
      const std::string group = c.group[i] == model::kNoIndex ? "?" : trace.groups[rank.groups[c.group[i]].job_group].name;
      ++seen[{group, c.op[i], SizeBucket(c.bytes[i]).first}][{std::string(rank.strings.Get(c.algorithm[i])),
                                                              std::string(rank.strings.Get(c.protocol[i])), c.channels[i]}];
    }
  }
  std::vector<ProtocolRow> out;
  for (const auto& [key, choices] : seen) {
    // The most frequent choice in the bucket (NCCL picks by size, so one usually).
    auto best = std::max_element(choices.begin(), choices.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    ProtocolRow row;
    std::tie(row.group, row.op, row.size_lo) = key;
    std::tie(row.algorithm, row.protocol, row.channels) = best->first;
    row.count = best->second;
    for (const CollectiveBucket& b : collectives.buckets)
      if (b.group_name == row.group && b.op == row.op && b.size_lo == row.size_lo) row.busbw = b.busbw_gbps;
    out.push_back(std::move(row));
  }
  return out;
}

namespace {

std::string Ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f ms", ns / 1e6);
  return buf;
}

std::string Summary(const CrossRankAnalysis& x, const CollectiveAnalysis& c, size_t ranks, size_t steps) {
  uint64_t total = 0;
  for (const GroupSkew& g : c.groups) total += g.matched;
  if (total == 0) return "No collective was matched across ranks.";
  if (x.stragglers.empty()) return "No rank arrived last at any collective.";
  const Straggler& s = x.stragglers.front();
  // Its share of the collectives it was in (in a job of several groups, not of all).
  const uint64_t matched = std::max<uint64_t>(s.matched, 1);
  const double share = static_cast<double>(s.last_arrivals) / static_cast<double>(matched);
  char pct[16];
  std::snprintf(pct, sizeof(pct), "%.0f%%", 100.0 * share);
  // Late by chance: every rank is last about 1/n of the time.
  // The most costly straggler first; the most frequent when no rank is consistently late.
  const double chance = 1.5 / static_cast<double>(std::max<size_t>(ranks, 2));
  const std::string one_off =
      s.worst_cost * 2 > s.cost_to_others
          ? ", " + Ms(static_cast<double>(s.worst_cost)) + " of it at one collective (#" + std::to_string(s.worst_seq) +
                " of group " + s.worst_group + ")"
          : std::string();
  if (share < chance) {
    const Straggler* often = &s;
    for (const Straggler& o : x.stragglers)
      if (o.last_arrivals * std::max<uint64_t>(often->matched, 1) > often->last_arrivals * std::max<uint64_t>(o.matched, 1))
        often = &o;
    std::snprintf(pct, sizeof(pct), "%.0f%%",
                  100.0 * static_cast<double>(often->last_arrivals) / static_cast<double>(std::max<uint64_t>(often->matched, 1)));
    return "No rank is consistently late: the last to arrive varies (rank " + std::to_string(often->rank) +
           ", the most often, at " + pct + " of " + std::to_string(std::max<uint64_t>(often->matched, 1)) +
           " matched collectives); rank " + std::to_string(s.rank) + " cost the others the most, " +
           Ms(static_cast<double>(s.cost_to_others)) + " in all" + one_off + ".";
  }
  std::string cost = (steps > 0 ? Ms(s.cost_per_step) + " per step" : Ms(static_cast<double>(s.cost_to_others)) + " in all") + one_off;
  std::string why;
  switch (s.cause) {
    case LateCause::kCompute:
      why = "; before those collectives its compute ran longer than the others'" +
            (s.kernels.empty() ? std::string() : " (" + s.kernels.front() + ")");
      break;
    case LateCause::kHostIdle: why = "; before them its GPU sat idle: the host launched late (CPU- or data-loading-bound)"; break;
    case LateCause::kOtherCollective: why = "; before them it was busy in another process group's collectives"; break;
    case LateCause::kUnknown: why = "; the trace does not show why"; break;
    case LateCause::kNone: break;
  }
  return "Rank " + std::to_string(s.rank) + " arrives last at " + pct + " of collectives (" +
         std::to_string(s.last_arrivals) + " of " + std::to_string(matched) + "), costing the others " + cost + why + ".";
}

}  // namespace

CrossRankAnalysis AnalyzeCrossRank(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                                   const std::vector<const RankTimeBreakdown*>& times,
                                   const CollectiveAnalysis& collectives, StretchSource& gpu,
                                   const DoingAtLookup& doing_at) {
  CrossRankAnalysis out;
  size_t steps = 0;
  for (const RankTimeBreakdown* t : times) steps = std::max(steps, t->steps.size());
  out.stragglers = FindStragglers(trace, in_window, steps, gpu, &out.steps);
  for (Straggler& s : out.stragglers)
    for (const RankWait& w : collectives.ranks)
      if (w.rank == s.rank) s.matched = w.matched;
  out.hangs = FindHangs(trace, in_window, doing_at);
  AnalyzeContention(trace, in_window, &out);
  out.pipeline = DetectPipeline(trace, in_window, gpu);
  out.protocols = ProtocolsUsed(trace, in_window, collectives);
  out.summary = Summary(out, collectives, trace.ranks.size(), steps);
  return out;
}

}  // namespace commlens::analysis
