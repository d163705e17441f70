#include "analysis/collectives.h"

#include <algorithm>
#include <map>
#include <optional>
#include <cmath>
#include <tuple>
#include <unordered_map>

#include "common/saturating.h"
#include "model/bus_bandwidth.h"

namespace commlens::analysis {

using model::CommOp;

std::string BucketOpName(const CollectiveBucket& b) {
  std::string name(model::CommOpName(b.op));
  return b.batched ? name + " batch" : name;
}

uint64_t CollectiveAnalysis::untimed() const {
  uint64_t n = 0;
  for (const CollectiveBucket& b : buckets) n += b.untimed;
  return n;
}

uint64_t CollectiveAnalysis::unsized() const {
  uint64_t n = 0;
  for (const CollectiveBucket& b : buckets) n += b.size_lo < 0 ? b.count : 0;
  return n;
}

uint64_t CollectiveAnalysis::counted() const {
  uint64_t n = 0;
  for (const CollectiveBucket& b : buckets) n += b.count;
  return n;
}

std::pair<int64_t, int64_t> SizeBucket(int64_t bytes) {
  if (bytes < 0) return {-1, -1};
  if (bytes == 0) return {0, 1};
  int64_t lo = 1;
  while (lo <= bytes / 2) lo *= 2;
  // The top bucket, [2^62, 2^63), ends at the largest int64 (its bound cannot be 2^63).
  return {lo, lo > INT64_MAX / 2 ? INT64_MAX : lo * 2};
}

model::TimeNs Percentile(const std::vector<model::TimeNs>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

int GroupSizeOf(const model::RankTrace& r, uint32_t group) {
  if (group == model::kNoIndex) return r.world_size;
  const model::ProcessGroup& g = r.groups[group];
  if (g.size > 0) return g.size;
  if (!g.ranks.empty()) return static_cast<int>(g.ranks.size());
  return r.world_size;
}

std::vector<uint8_t> OpsInWindow(const model::RankTrace& r, const ActivityWindow& w) {
  std::vector<uint8_t> gpu_in(r.gpu.size(), 0);
  for (uint32_t row : w.rows) gpu_in[row] = 1;
  std::vector<uint8_t> in(r.comms.size(), 0);
  for (uint32_t i = 0; i < r.comms.size(); ++i) {
    uint32_t a = r.comms.activity[i];
    in[i] = a == model::kNoIndex || gpu_in[a];
  }
  return in;
}

namespace {

constexpr uint32_t kNoGroup = model::kNoIndex;


// Bucket key: (job group, op, batched, size bucket) packed in one integer.
uint64_t BucketKey(uint32_t group, CommOp op, bool batched, int64_t size_lo) {
  const uint64_t log2 = size_lo <= 0 ? (size_lo < 0 ? 0 : 1) : 2 + static_cast<uint64_t>(std::log2(size_lo));
  return (static_cast<uint64_t>(group) << 16) | (static_cast<uint64_t>(op) << 8) | (batched ? 0x80 : 0) | log2;
}

// A batch of ops that ran as one kernel (model::kCommBatched): its rows are consecutive,
// the first without kCommBatchNext. Its bytes summed (-1 when one is unknown), whether
// every op is a send or receive, and its calls per op.
struct Batch {
  int64_t bytes = 0;
  bool p2p = true;
  std::map<CommOp, uint64_t> ops;
};

bool IsBatched(const model::CommOps& c, uint32_t i) { return c.flags[i] & model::kCommBatched; }

// The batch that starts at row |i| (a batched row without kCommBatchNext).
Batch BatchAt(const model::CommOps& c, uint32_t i) {
  Batch b;
  for (uint32_t j = i; j < c.size() && IsBatched(c, j) && (j == i || (c.flags[j] & model::kCommBatchNext)); ++j) {
    b.bytes = b.bytes < 0 || c.bytes[j] < 0 ? -1 : SaturatingAdd(b.bytes, c.bytes[j]);
    b.p2p = b.p2p && model::IsPointToPoint(c.op[j]);
    ++b.ops[c.op[j]];
  }
  return b;
}

std::string GroupName(const model::Trace& t, uint32_t group) {
  return group == kNoGroup ? "?" : t.groups[group].name;
}

struct BucketAcc {
  CollectiveBucket b;
  std::vector<uint8_t> ranks;  // by rank index: ran at least one
  std::vector<model::TimeNs> waited_for;  // by rank index: the others' waiting for its late arrivals
};

void AddBuckets(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                const Arrivals& arrivals, const std::vector<BenchCurve>& bench, CollectiveAnalysis* out) {
  std::unordered_map<uint64_t, BucketAcc> buckets;
  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) {
    const model::RankTrace& r = trace.ranks[ri];
    const model::CommOps& c = r.comms;
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (!in_window[ri][i]) continue;
      ++out->operations;
      // A batch counts once, as its first row, with its bytes.
      const bool batched = IsBatched(c, i);
      if (batched && (c.flags[i] & model::kCommBatchNext)) continue;
      const std::optional<Batch> batch = batched ? std::optional<Batch>(BatchAt(c, i)) : std::nullopt;
      const CommOp op = batch && batch->p2p ? CommOp::kSendRecv : c.op[i];
      const int64_t bytes = batch ? batch->bytes : c.bytes[i];
      const model::ProcessGroup* g = c.group[i] == model::kNoIndex ? nullptr : &r.groups[c.group[i]];
      const uint32_t job_group = g ? g->job_group : kNoGroup;
      auto [lo, hi] = SizeBucket(bytes);
      BucketAcc& acc = buckets[BucketKey(job_group, op, batched, lo)];
      CollectiveBucket& b = acc.b;
      if (b.count == 0) {
        b.group_name = GroupName(trace, job_group);
        b.group_desc = g ? trace.groups[job_group].description : "";
        b.group_size = GroupSizeOf(r, c.group[i]);
        b.op = op;
        b.batched = batched;
        b.size_lo = lo;
        b.size_hi = hi;
        acc.ranks.assign(trace.ranks.size(), 0);
        acc.waited_for.assign(trace.ranks.size(), 0);
      }
      acc.ranks[ri] = 1;
      ++b.count;
      if (batch)
        for (const auto& [o, n] : batch->ops) b.batch_ops[o] += n;
      if (c.flags[i] & model::kCommNoGpuTiming) {
        ++b.untimed;
        continue;
      }
      const model::TimeNs d = c.end[i] - c.start[i];
      b.durations.Add(d);
      // Sizes up to 2^63 are valid input (elements times element size): saturate rather
      // than wrap (found by summary_fuzzer).
      b.total = SaturatingAdd(b.total, d);
      if (bytes > 0) b.bytes = SaturatingAdd(b.bytes, bytes);
      if (const model::TimeNs t = arrivals.Transfer(trace, ri, i); t >= 0 && bytes >= 0) {
        ++b.transfer_count;
        b.transfer_kernel = SaturatingAdd(b.transfer_kernel, d);
        b.transfer = SaturatingAdd(b.transfer, std::min(t, d));
        b.transfer_bytes = SaturatingAdd(b.transfer_bytes, bytes);
        const uint32_t last = arrivals.last_rank[ri][i];
        if (last != ri && last != model::kNoIndex) acc.waited_for[last] = SaturatingAdd(acc.waited_for[last], d - std::min(t, d));
      }
    }
  }
  for (auto& [key, acc] : buckets) {
    CollectiveBucket& b = acc.b;
    b.ranks = static_cast<int>(std::count(acc.ranks.begin(), acc.ranks.end(), 1));
    b.p50 = b.durations.Quantile(50);
    b.p99 = b.durations.Quantile(99);
    b.max = b.durations.max();
    const double factor = model::BusBwFactor(b.op, b.group_size);
    if (b.total > 0 && b.bytes > 0) {
      b.kernel_algbw_gbps = static_cast<double>(b.bytes) / static_cast<double>(b.total);  // B/ns = GB/s
      b.kernel_busbw_gbps = b.kernel_algbw_gbps * factor;
    }
    if (b.transfer > 0 && b.transfer_bytes > 0) {
      b.transfer_algbw_gbps = static_cast<double>(b.transfer_bytes) / static_cast<double>(b.transfer);
      b.transfer_busbw_gbps = b.transfer_algbw_gbps * factor;
    }
    const auto most = std::max_element(acc.waited_for.begin(), acc.waited_for.end());
    if (most != acc.waited_for.end() && *most > 0) {
      b.waited_for_rank = trace.ranks[static_cast<size_t>(most - acc.waited_for.begin())].rank;
      b.waited_for_time = *most;
    }
    const uint64_t timed = b.count - b.untimed;
    if (const BenchCurve* curve = CurveFor(bench, b.op, b.group_size); curve && timed > 0 && b.bytes > 0)
      b.bench_busbw_gbps = BusBwAt(*curve, static_cast<double>(b.bytes) / static_cast<double>(timed));
    out->buckets.push_back(std::move(b));
  }
  std::sort(out->buckets.begin(), out->buckets.end(), [](const CollectiveBucket& a, const CollectiveBucket& b) {
    return std::tie(a.group_name, a.op, a.batched, a.size_lo) < std::tie(b.group_name, b.op, b.batched, b.size_lo);
  });
}

void AddCrossRank(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                  CollectiveAnalysis* out) {
  const model::MatchedOps& m = trace.matched;
  std::vector<GroupSkew> groups(trace.groups.size());
  std::vector<std::vector<model::TimeNs>> skews(trace.groups.size()), end_skews(trace.groups.size());
  std::vector<uint8_t> seen(trace.groups.size(), 0);
  out->ranks.resize(trace.ranks.size());
  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) out->ranks[ri].rank = trace.ranks[ri].rank;

  std::vector<uint32_t> members;  // of the current op, in the window
  for (size_t k = 0; k < m.size(); ++k) {
    members.clear();
    for (uint32_t j = m.first[k]; j < m.first[k + 1]; ++j)
      if (in_window[m.rank_index[j]][m.row[j]]) members.push_back(j);
    const uint32_t g = m.group[k];
    // A group of one member has nothing to match: its ops are neither matched nor not.
    if (members.empty() || trace.groups[g].size == 1) continue;
    seen[g] = 1;
    if (members.size() < 2) {
      ++groups[g].unmatched;
      continue;
    }
    // Messages count as waits (below), not as collectives; a collective some of whose
    // ranks fall outside their window (at its edge) would blame the wrong last rank.
    const bool message = m.kind[k] == model::MatchKind::kP2p;
    const bool complete = members.size() == m.members(k);
    if (!message && !complete) {
      ++groups[g].partial;
      continue;
    }
    if (message) ++groups[g].messages;
    else ++groups[g].matched;
    if (!model::AllGpuTimed(trace, k)) continue;  // host times: no skew or wait to measure
    model::TimeNs first = INT64_MAX, last = INT64_MIN, first_end = INT64_MAX, last_end = INT64_MIN;
    uint32_t last_rank = 0;
    for (uint32_t j : members) {
      first = std::min(first, m.start[j]);
      first_end = std::min(first_end, m.end[j]);
      last_end = std::max(last_end, m.end[j]);
      if (m.start[j] > last) {
        last = m.start[j];
        last_rank = m.rank_index[j];
      }
    }
    // NCCL's kernel phases tell the last member and each one's wait without the clocks
    // (arrivals.h); the skews stay on the aligned clocks.
    const uint32_t by_phases = complete ? LastByPhases(trace, k) : model::kNoIndex;
    if (by_phases != model::kNoIndex) last_rank = m.rank_index[by_phases];
    if (!message) {
      skews[g].push_back(last - first);
      end_skews[g].push_back(last_end - first_end);
      ++out->ranks[last_rank].last_arrivals;
    }
    for (uint32_t j : members) {
      RankWait& w = out->ranks[m.rank_index[j]];
      const model::TimeNs d = m.end[j] - m.start[j];
      const model::TimeNs waited =
          std::clamp<model::TimeNs>(by_phases != model::kNoIndex ? trace.ranks[m.rank_index[j]].comms.initial_sync[m.row[j]]
                                                                 : last - m.start[j],
                                    0, d);
      if (!message) ++w.matched;
      w.in_collectives = SaturatingAdd(w.in_collectives, d);
      w.waiting += waited;
      if (m.kind[k] == model::MatchKind::kP2p &&
          trace.ranks[m.rank_index[j]].comms.op[m.row[j]] == model::CommOp::kRecv) {
        w.recv_waiting += waited;
        w.recv_transfer += d - waited;
      }
    }
  }
  for (uint32_t g = 0; g < trace.groups.size(); ++g) {
    if (!seen[g]) continue;
    GroupSkew& gs = groups[g];
    gs.group_name = trace.groups[g].name;
    gs.group_desc = trace.groups[g].description;
    std::sort(skews[g].begin(), skews[g].end());
    gs.skew_p50 = Percentile(skews[g], 50);
    gs.skew_p99 = Percentile(skews[g], 99);
    gs.skew_max = skews[g].empty() ? 0 : skews[g].back();
    std::sort(end_skews[g].begin(), end_skews[g].end());
    gs.end_skew_p50 = Percentile(end_skews[g], 50);
    gs.end_skew_p99 = Percentile(end_skews[g], 99);
    gs.end_skew_max = end_skews[g].empty() ? 0 : end_skews[g].back();
    out->groups.push_back(std::move(gs));
  }
  std::sort(out->groups.begin(), out->groups.end(),
            [](const GroupSkew& a, const GroupSkew& b) { return a.group_name < b.group_name; });
}

}  // namespace

CollectiveAnalysis AnalyzeCollectives(const model::Trace& trace,
                                      const std::vector<const ActivityWindow*>& windows) {
  std::vector<std::vector<uint8_t>> in_window(trace.ranks.size());
  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) in_window[ri] = OpsInWindow(trace.ranks[ri], *windows[ri]);
  return AnalyzeCollectives(trace, in_window, ComputeArrivals(trace, in_window));
}

CollectiveAnalysis AnalyzeCollectives(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window,
                                      const Arrivals& arrivals, const std::vector<BenchCurve>& bench) {
  CollectiveAnalysis out;
  out.phase_timed = arrivals.from_phases;
  AddBuckets(trace, in_window, arrivals, bench, &out);
  AddCrossRank(trace, in_window, &out);
  return out;
}

}  // namespace commlens::analysis
