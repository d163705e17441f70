#include "analysis/cross_rank.h"

#include <algorithm>
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <tuple>

#include "analysis/cross_rank_parts.h"
#include "common/units.h"
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
      if (b.group_name == row.group && b.op == row.op && b.size_lo == row.size_lo) row.busbw = b.transfer_busbw_gbps;
    out.push_back(std::move(row));
  }
  return out;
}

namespace {

std::string Pct(double share) { return fmt::format("{:.0f}%", 100.0 * share); }

// "its GPU sat idle: the host launched late", or the parts with their shares when no one
// cause explains the lateness.
std::string WhyLate(const Straggler& s) {
  static constexpr const char* kWords[3] = {
      "its compute ran longer than the others'", "its GPU sat idle: the host launched late (CPU- or data-loading-bound)",
      "it was busy in another process group's collectives"};
  if (s.mixed) {
    std::vector<std::pair<double, int>> parts;
    for (int k = 0; k < 3; ++k)
      if (s.cause_share[k] >= 0.05) parts.push_back({s.cause_share[k], k});
    std::sort(parts.rbegin(), parts.rend());
    std::string out = "; before them no one cause dominates: ";
    for (size_t i = 0; i < parts.size(); ++i) {
      static constexpr const char* kShort[3] = {"longer compute", "the host launching late", "other groups' collectives"};
      out += (i ? ", " : "") + fmt::format("{} {}", kShort[parts[i].second], Pct(parts[i].first));
    }
    return out;
  }
  switch (s.cause) {
    case LateCause::kCompute:
      return std::string("; before those collectives ") + kWords[0] +
             (s.kernels.empty() ? std::string() : " (" + s.kernels.front() + ")");
    case LateCause::kHostIdle: return std::string("; before them ") + kWords[1];
    case LateCause::kOtherCollective: return std::string("; before them ") + kWords[2];
    case LateCause::kUnknown: return "; the trace does not show why";
    case LateCause::kNone: break;
  }
  return "";
}

std::string Summary(const CrossRankAnalysis& x, const CollectiveAnalysis& c) {
  uint64_t total = 0;
  for (const GroupSkew& g : c.groups) total += g.matched;
  if (total == 0) return "No collective was matched across ranks.";
  if (x.stragglers.empty()) return "No rank arrived last at any collective.";
  const bool per_step = x.noise.steps > 0;
  const char* unit = per_step ? " per step" : " over the trace";
  // The rank whose late arrivals delayed the collectives most, in wall time.
  const Straggler& s = x.stragglers.front();
  const double delay = per_step ? s.delay_per_step : static_cast<double>(s.delay);
  if (delay < static_cast<double>(x.noise.noise))
    return fmt::format("No rank holds the others up: the longest delay, rank {}'s, is {} of wall time{}, within the "
                       "{}' own variation ({}).",
                       s.rank, FormatDuration(static_cast<int64_t>(delay)), unit, per_step ? "steps" : "window",
                       per_step ? fmt::format("{} steps of median {}, +-{}", x.noise.steps, FormatDuration(x.noise.median),
                                              FormatDuration(x.noise.noise))
                                : fmt::format("1% of {}", FormatDuration(x.noise.median)));
  auto share = [](const Straggler& o) {
    return fmt::format("{} of its {} collectives ({} by chance)",
                       Pct(static_cast<double>(o.last_arrivals) / static_cast<double>(std::max<uint64_t>(o.matched, 1))),
                       o.matched, Pct(o.chance_arrivals / static_cast<double>(std::max<uint64_t>(o.matched, 1))));
  };
  const std::string cost = fmt::format(
      "delaying them by {} of wall time{} (the others waited {} of rank-time{}, summed over them)",
      FormatDuration(static_cast<int64_t>(delay)), unit,
      FormatDuration(static_cast<int64_t>(per_step ? s.cost_per_step : static_cast<double>(s.cost_to_others))), unit);
  const std::string one_off = s.worst_cost * 2 > s.cost_to_others
                                  ? fmt::format("; {} of that rank-time at one collective (#{} of group {})",
                                                FormatDuration(s.worst_cost), s.worst_seq, s.worst_group)
                                  : std::string();
  if (!s.consistent) {
    // The most frequent last arrival against chance, for the record.
    const Straggler* often = &s;
    for (const Straggler& o : x.stragglers)
      if (static_cast<double>(o.last_arrivals) / std::max(o.chance_arrivals, 1e-9) >
          static_cast<double>(often->last_arrivals) / std::max(often->chance_arrivals, 1e-9))
        often = &o;
    return fmt::format("No rank is consistently late: the last to arrive varies (rank {}, the most often, at {}); "
                       "rank {}'s late arrivals delayed the collectives most, {} of wall time{}{}.",
                       often->rank, share(*often), s.rank, FormatDuration(static_cast<int64_t>(delay)), unit, one_off);
  }
  return fmt::format("Rank {} arrives last at {}, {}{}{}.", s.rank, share(s), cost, one_off, WhyLate(s));
}

}  // namespace

CrossRankAnalysis AnalyzeCrossRank(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                                   const Arrivals& arrivals, const std::vector<const RankTimeBreakdown*>& times,
                                   const StepNoise& noise, const CollectiveAnalysis& collectives, StretchSource& gpu,
                                   const DoingAtLookup& doing_at) {
  CrossRankAnalysis out;
  out.noise = noise;
  out.stragglers = FindStragglers(trace, in_window, noise, gpu, &out.steps);
  out.hangs = FindHangs(trace, in_window, doing_at);
  AnalyzeContention(trace, in_window, arrivals, &out);
  out.pipeline = DetectPipeline(trace, in_window, gpu);
  out.protocols = ProtocolsUsed(trace, in_window, collectives);
  out.summary = Summary(out, collectives);
  if (!trace.missing_ranks.empty())
    out.summary = fmt::format("Partial job ({} of {} ranks; the others have no trace): {}", trace.ranks.size(),
                              trace.world_size, out.summary);
  return out;
}

}  // namespace commlens::analysis

namespace commlens::analysis {

StepNoise MeasureStepNoise(const std::vector<JobStepBreakdown>& steps, const std::vector<const RankTimeBreakdown*>& times) {
  constexpr size_t kMinStepsForNoise = 4;
  auto median = [](std::vector<model::TimeNs> v) {
    if (v.empty()) return model::TimeNs{0};
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  StepNoise n;
  if (steps.empty()) {
    model::TimeNs sum = 0;
    for (const RankTimeBreakdown* t : times) sum += t->total.span;
    n.median = times.empty() ? 0 : sum / static_cast<model::TimeNs>(times.size());
    n.noise = n.median / 100;
    return n;
  }
  std::vector<model::TimeNs> spans;
  for (const JobStepBreakdown& s : steps) spans.push_back(s.mean.span);
  n.steps = spans.size();
  n.median = median(spans);
  // At least 1% of the step: a delay smaller than that is not worth a rank's name. The
  // deviation needs a few steps to mean anything; with fewer, the floor alone.
  n.noise = n.median / 100;
  if (spans.size() >= kMinStepsForNoise) {
    for (model::TimeNs& v : spans) v = std::abs(v - n.median);
    n.noise = std::max(static_cast<model::TimeNs>(1.4826 * static_cast<double>(median(spans))), n.noise);
  }
  return n;
}

}  // namespace commlens::analysis
