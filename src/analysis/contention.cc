// Process-group contention (cross_rank.h): on each rank, collectives of different groups
// that run at the same time, the time that happens, and per (group, op, size bucket) the
// bandwidth of the collectives that moved data alone against those that moved data while
// another group's did (the evidence behind "isolate the network per process group").
//
// Both sides are judged on the transfer (arrivals.h), not the kernel: a collective whose
// kernel spins waiting for a late member while another group's runs is not slowed by it,
// and its kernel-time bandwidth would only measure the wait. Another group's op with no
// known transfer counts with its whole kernel (it may have moved data at any time).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/arrivals.h"
#include "analysis/collectives.h"
#include "analysis/cross_rank_parts.h"
#include "model/bus_bandwidth.h"
#include "model/collective.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

struct Op {
  TimeNs start, end;   // the kernel
  TimeNs moving;       // when its transfer began (the last member's start); start if unknown
  bool known;          // its transfer time is known
  uint32_t job_group;
  uint32_t row;
};

struct RowAcc {
  std::vector<double> busbw[2];  // per op, alone and overlapped
  uint64_t unknown = 0;
  std::set<std::string> with;
};

// Time during which ops of two or more groups run (kernels).
TimeNs ContendedTime(const std::vector<Op>& ops) {
  std::vector<std::tuple<TimeNs, int, uint32_t>> edges;  // time, +1/-1, group
  for (const Op& o : ops) edges.push_back({o.start, +1, o.job_group}), edges.push_back({o.end, -1, o.job_group});
  std::sort(edges.begin(), edges.end());
  std::map<uint32_t, int> active;
  TimeNs total = 0, last = 0;
  for (const auto& [t, d, g] : edges) {
    if (active.size() >= 2) total += t - last;
    last = t;
    if (d > 0) ++active[g];
    else if (--active[g] == 0) active.erase(g);
  }
  return total;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

BandwidthSpread Spread(std::vector<double> v) {
  BandwidthSpread s;
  s.count = v.size();
  std::sort(v.begin(), v.end());
  s.p25 = Quantile(v, 0.25);
  s.median = Quantile(v, 0.5);
  s.p75 = Quantile(v, 0.75);
  return s;
}

}  // namespace

void AnalyzeContention(const model::Trace& trace, const InWindow& in_window, const Arrivals& arrivals,
                       CrossRankAnalysis* out) {
  std::map<std::tuple<std::string, model::CommOp, int64_t>, RowAcc> rows;
  bool any = false;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rank = trace.ranks[r];
    const model::CommOps& c = rank.comms;
    std::vector<Op> ops;
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (!in_window[r][i] || c.group[i] == model::kNoIndex || c.end[i] <= c.start[i] ||
          (c.flags[i] & model::kCommNoGpuTiming))
        continue;
      const TimeNs last = arrivals.last_start[r][i];
      const bool known = last != model::kNoTime;
      ops.push_back({c.start[i], c.end[i], known ? std::max(last, c.start[i]) : c.start[i], known,
                     rank.groups[c.group[i]].job_group, i});
    }
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
    // Kernels of two groups at once: the candidates; transfers that overlap: contention.
    std::vector<std::set<uint32_t>> overlaps(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t j = i + 1; j < ops.size() && ops[j].start < ops[i].end; ++j) {
        if (ops[j].job_group == ops[i].job_group) continue;
        any = true;
        if (ops[j].moving < ops[i].end && ops[i].moving < ops[j].end) {
          overlaps[i].insert(ops[j].job_group);
          overlaps[j].insert(ops[i].job_group);
        }
      }
    out->contended_time += ContendedTime(ops);
    for (size_t i = 0; i < ops.size(); ++i) {
      const uint32_t row = ops[i].row;
      RowAcc& a = rows[{trace.groups[ops[i].job_group].name, c.op[row], SizeBucket(c.bytes[row]).first}];
      const TimeNs transfer = ops[i].end - ops[i].moving;
      if (!ops[i].known || transfer <= 0 || c.bytes[row] < 0) {
        ++a.unknown;
        continue;
      }
      const double factor = model::BusBwFactor(c.op[row], GroupSizeOf(rank, c.group[row]));
      a.busbw[overlaps[i].empty() ? 0 : 1].push_back(static_cast<double>(c.bytes[row]) /
                                                      static_cast<double>(transfer) * factor);
      for (uint32_t other : overlaps[i]) a.with.insert(trace.groups[other].name);
    }
  }
  if (!any) return;  // no two groups' collectives ever ran at once
  for (auto& [key, a] : rows) {
    ContentionRow row;
    std::tie(row.group, row.op, row.size_lo) = key;
    row.alone = Spread(std::move(a.busbw[0]));
    row.overlapped = Spread(std::move(a.busbw[1]));
    row.unknown = a.unknown;
    row.with_groups.assign(a.with.begin(), a.with.end());
    out->contention.push_back(std::move(row));
  }
}

}  // namespace commlens::analysis
