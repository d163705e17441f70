// Process-group contention (cross_rank.h): on each rank, collectives of different groups
// that run at the same time, the time that happens, and per (group, op, size bucket) the
// bandwidth of the collectives that ran alone against those that overlapped another
// group's (the evidence behind "isolate the network per process group").
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/cross_rank_parts.h"
#include "common/saturating.h"
#include "model/collective.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

struct Op {
  TimeNs start, end;
  uint32_t job_group;
  uint32_t row;
};

struct RowAcc {
  uint64_t count[2] = {0, 0};  // alone, overlapped
  int64_t bytes[2] = {0, 0};
  TimeNs time[2] = {0, 0};
  int group_size = 0;
  std::set<std::string> with;
};

// Time during which ops of two or more groups run (ops sorted by start).
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

}  // namespace

void AnalyzeContention(const model::Trace& trace, const InWindow& in_window, CrossRankAnalysis* out) {
  std::map<std::tuple<std::string, model::CommOp, int64_t>, RowAcc> rows;
  bool any = false;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const model::RankTrace& rank = trace.ranks[r];
    const model::CommOps& c = rank.comms;
    std::vector<Op> ops;
    for (uint32_t i = 0; i < c.size(); ++i)
      if (in_window[r][i] && c.group[i] != model::kNoIndex && c.end[i] > c.start[i])
        ops.push_back({c.start[i], c.end[i], rank.groups[c.group[i]].job_group, i});
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
    std::vector<std::set<uint32_t>> overlaps(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t j = i + 1; j < ops.size() && ops[j].start < ops[i].end; ++j)
        if (ops[j].job_group != ops[i].job_group) {
          overlaps[i].insert(ops[j].job_group);
          overlaps[j].insert(ops[i].job_group);
          any = true;
        }
    out->contended_time += ContendedTime(ops);
    for (size_t i = 0; i < ops.size(); ++i) {
      const uint32_t row = ops[i].row;
      RowAcc& a = rows[{trace.groups[ops[i].job_group].name, c.op[row], SizeBucket(c.bytes[row]).first}];
      const int k = overlaps[i].empty() ? 0 : 1;
      ++a.count[k];
      a.bytes[k] = SaturatingAdd(a.bytes[k], std::max<int64_t>(c.bytes[row], 0));
      a.time[k] += ops[i].end - ops[i].start;
      a.group_size = GroupSizeOf(rank, c.group[row]);
      for (uint32_t other : overlaps[i]) a.with.insert(trace.groups[other].name);
    }
  }
  if (!any) return;  // no two groups' collectives ever ran at once
  for (auto& entry : rows) {
    const RowAcc& a = entry.second;  // a plain reference: the lambda below captures it
    ContentionRow row;
    std::tie(row.group, row.op, row.size_lo) = entry.first;
    const double factor = model::BusBwFactor(row.op, a.group_size);
    auto busbw = [&](int k) { return a.time[k] > 0 ? static_cast<double>(a.bytes[k]) / static_cast<double>(a.time[k]) * factor : 0.0; };
    row.alone_count = a.count[0];
    row.overlapped_count = a.count[1];
    row.alone_busbw = busbw(0);
    row.overlapped_busbw = busbw(1);
    row.with_groups.assign(a.with.begin(), a.with.end());
    out->contention.push_back(std::move(row));
  }
}

}  // namespace commlens::analysis
