#include "analysis/collectives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_set>

namespace commlens::analysis {

using model::CommOp;

std::pair<int64_t, int64_t> SizeBucket(int64_t bytes) {
  if (bytes < 0) return {-1, -1};
  if (bytes == 0) return {0, 1};
  int64_t lo = 1;
  while (lo <= bytes / 2) lo *= 2;
  return {lo, lo * 2};
}

model::TimeNs Percentile(const std::vector<model::TimeNs>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

namespace {

struct OpRef {
  size_t rank_index;
  uint32_t row;
};

const model::ProcessGroup* GroupOf(const model::RankTrace& r, uint32_t row) {
  uint32_t gi = r.comms.group[row];
  return gi == model::kNoIndex ? nullptr : &r.groups[gi];
}

// Operations an analysis covers: those whose GPU activity is in the window, and every
// operation of sources without GPU activities (native traces time the op itself).
std::vector<uint32_t> SelectedOps(const model::RankTrace& r, const ActivityWindow& w) {
  std::unordered_set<uint32_t> in_window(w.rows.begin(), w.rows.end());
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < r.comms.size(); ++i) {
    uint32_t a = r.comms.activity[i];
    if (a == model::kNoIndex || in_window.count(a)) ops.push_back(i);
  }
  return ops;
}

int GroupSize(const model::RankTrace& r, const model::ProcessGroup* g) {
  if (g && g->size > 0) return g->size;
  if (g && !g->ranks.empty()) return static_cast<int>(g->ranks.size());
  return r.world_size;
}

}  // namespace

CollectiveAnalysis AnalyzeCollectives(const model::Trace& trace,
                                      const std::vector<const ActivityWindow*>& windows) {
  CollectiveAnalysis out;
  using BucketKey = std::tuple<std::string, CommOp, int64_t>;
  struct BucketAcc {
    CollectiveBucket b;
    std::vector<model::TimeNs> durations;
    std::unordered_set<int> ranks;
  };
  std::map<BucketKey, BucketAcc> buckets;
  // (group name, seq) -> ops on each rank
  std::map<std::pair<std::string, int64_t>, std::vector<OpRef>> matches;

  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) {
    const model::RankTrace& r = trace.ranks[ri];
    const model::CommOps& c = r.comms;
    for (uint32_t i : SelectedOps(r, *windows[ri])) {
      ++out.operations;
      const model::ProcessGroup* g = GroupOf(r, i);
      std::string gname = g ? g->name : "?";
      auto [lo, hi] = SizeBucket(c.bytes[i]);
      BucketAcc& acc = buckets[{gname, c.op[i], lo}];
      if (acc.durations.empty()) {
        acc.b.group_name = gname;
        acc.b.group_desc = g ? g->description : "";
        acc.b.group_size = GroupSize(r, g);
        acc.b.op = c.op[i];
        acc.b.size_lo = lo;
        acc.b.size_hi = hi;
      }
      model::TimeNs d = c.end[i] - c.start[i];
      acc.durations.push_back(d);
      acc.b.total += d;
      if (c.bytes[i] > 0) acc.b.bytes += c.bytes[i];
      acc.ranks.insert(r.rank);
      if (g && c.seq[i] >= 0) matches[{gname, c.seq[i]}].push_back({ri, i});
    }
  }

  for (auto& [key, acc] : buckets) {
    std::sort(acc.durations.begin(), acc.durations.end());
    CollectiveBucket& b = acc.b;
    b.count = acc.durations.size();
    b.ranks = static_cast<int>(acc.ranks.size());
    b.p50 = Percentile(acc.durations, 50);
    b.p99 = Percentile(acc.durations, 99);
    b.max = acc.durations.back();
    if (b.total > 0 && b.bytes > 0) {
      b.algbw_gbps = static_cast<double>(b.bytes) / static_cast<double>(b.total);  // B/ns = GB/s
      b.busbw_gbps = b.algbw_gbps * model::BusBwFactor(b.op, b.group_size);
    }
    out.buckets.push_back(std::move(b));
  }

  std::map<std::string, std::vector<model::TimeNs>> skews;
  std::map<std::string, GroupSkew> groups;
  std::vector<RankWait> waits(trace.ranks.size());
  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) waits[ri].rank = trace.ranks[ri].rank;
  for (const auto& [key, ops] : matches) {
    GroupSkew& gs = groups[key.first];
    if (gs.group_name.empty()) {
      gs.group_name = key.first;
      const model::RankTrace& r0 = trace.ranks[ops[0].rank_index];
      const model::ProcessGroup* g = GroupOf(r0, ops[0].row);
      gs.group_desc = g ? g->description : "";
    }
    if (ops.size() < 2) {
      ++gs.unmatched;
      continue;
    }
    ++gs.matched;
    model::TimeNs first = INT64_MAX, last = INT64_MIN;
    size_t last_rank = 0;
    for (const OpRef& op : ops) {
      model::TimeNs s = trace.ranks[op.rank_index].comms.start[op.row];
      first = std::min(first, s);
      if (s > last) {
        last = s;
        last_rank = op.rank_index;
      }
    }
    skews[key.first].push_back(last - first);
    ++waits[last_rank].last_arrivals;
    for (const OpRef& op : ops) {
      const model::CommOps& c = trace.ranks[op.rank_index].comms;
      model::TimeNs d = c.end[op.row] - c.start[op.row];
      waits[op.rank_index].in_collectives += d;
      waits[op.rank_index].waiting += std::min(d, last - c.start[op.row]);
    }
  }
  for (auto& [name, gs] : groups) {
    auto& v = skews[name];
    std::sort(v.begin(), v.end());
    gs.skew_p50 = Percentile(v, 50);
    gs.skew_p99 = Percentile(v, 99);
    gs.skew_max = v.empty() ? 0 : v.back();
    out.groups.push_back(gs);
  }
  out.ranks = std::move(waits);
  return out;
}

}  // namespace commlens::analysis
