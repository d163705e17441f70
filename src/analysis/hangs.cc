// Hangs and desyncs (cross_rank.h): per process group, the ranks whose last collective
// comes before the others' (they stopped, or the trace of them ends, short of it), and
// collectives that the ranks ran as different ops (a desync: the k-th collective is not
// the same call everywhere).
#include <algorithm>
#include <map>

#include "analysis/cross_rank_parts.h"
#include "model/collective.h"

namespace commlens::analysis {

namespace {

std::string RankList(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) s += i + 1 == ranks.size() ? " and " : ", ";
    s += std::to_string(ranks[i]);
  }
  return s;
}

// The last moment a rank's trace shows anything, or its recorder was known to run.
model::TimeNs TraceEnd(const model::RankTrace& r) {
  model::TimeNs end = r.alive_until == model::kNoTime ? INT64_MIN : r.alive_until;
  for (model::TimeNs t : r.gpu.end) end = std::max(end, t);
  if (r.gpu_last_end != model::kNoTime) end = std::max(end, r.gpu_last_end);
  for (model::TimeNs t : r.host.end) end = std::max(end, t);
  for (model::TimeNs t : r.comms.end) end = std::max(end, t);
  return end;
}

std::string Duration(model::TimeNs ns) {
  char buf[32];
  if (ns < 1'000'000) std::snprintf(buf, sizeof(buf), "%.1f us", static_cast<double>(ns) / 1e3);
  else if (ns < 1'000'000'000) std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(buf, sizeof(buf), "%.2f s", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string GroupLabel(const model::JobGroup& g) {
  return g.description.empty() ? g.name : g.name + " (" + g.description + ")";
}

}  // namespace

std::string DoingAt(const model::RankTrace& r, model::TimeNs t) {
  auto pick = [&](const auto& table) -> std::string {
    int64_t open = -1, before = -1;
    for (size_t i = 0; i < table.size(); ++i) {
      if (table.start[i] <= t && table.end[i] > t) {
        if (open < 0 || table.start[i] >= table.start[open]) open = static_cast<int64_t>(i);
      } else if (table.end[i] <= t && (before < 0 || table.end[i] > table.end[before])) {
        before = static_cast<int64_t>(i);
      }
    }
    if (open >= 0)
      return "was in \"" + std::string(r.strings.Get(table.name[open])) + "\" (from " +
             Duration(t - table.start[open]) + " before it to " + Duration(table.end[open] - t) + " after)";
    if (before >= 0)
      return "last showed \"" + std::string(r.strings.Get(table.name[before])) + "\", which ended " +
             Duration(t - table.end[before]) + " before it";
    return {};
  };
  // Host ranges on the host only (GPU projections of annotations have a device).
  model::Annotations host_ranges;
  for (size_t i = 0; i < r.annotations.size(); ++i)
    if (r.annotations.device[i] < 0 && r.annotations.end[i] > r.annotations.start[i])
      host_ranges.Append(r.annotations.start[i], r.annotations.end[i], r.annotations.name[i], r.annotations.domain[i],
                         r.annotations.pid[i], r.annotations.tid[i], -1);
  std::string doing = pick(host_ranges);
  return doing.empty() ? pick(r.host) : doing;
}

std::vector<Hang> FindHangs(const model::Trace& trace, const InWindow& in_window, const DoingAtLookup& doing_at) {
  constexpr size_t kMaxReported = 32;
  const model::MatchedOps& m = trace.matched;
  std::vector<Hang> out;
  std::vector<uint32_t> members;
  // Per group: each rank's last collective (seq) and the rows by seq.
  constexpr int64_t kNone = -1;
  std::map<uint32_t, std::vector<int64_t>> last;  // group -> per rank index, kNone when absent
  std::map<uint32_t, std::vector<int64_t>> first;  // group -> per rank index: its first seq in the window
  std::map<std::pair<uint32_t, int64_t>, uint32_t> row_of;
  for (uint32_t k = 0; k < m.size(); ++k) {
    if (m.kind[k] != model::MatchKind::kCollective) continue;
    InWindowMembers(trace, in_window, k, &members);
    if (members.empty()) continue;
    row_of[{m.group[k], m.seq[k]}] = k;
    auto& by_rank = last[m.group[k]];
    if (by_rank.empty()) by_rank.assign(trace.ranks.size(), kNone);
    auto& from = first[m.group[k]];
    if (from.empty()) from.assign(trace.ranks.size(), INT64_MAX);
    for (uint32_t j : members) {
      by_rank[m.rank_index[j]] = std::max(by_rank[m.rank_index[j]], m.seq[k]);
      from[m.rank_index[j]] = std::min(from[m.rank_index[j]], m.seq[k]);
    }
    // Desync: one collective, different ops.
    const model::CommOp op0 = trace.ranks[m.rank_index[members[0]]].comms.op[m.row[members[0]]];
    for (uint32_t j : members) {
      const model::CommOp op = trace.ranks[m.rank_index[j]].comms.op[m.row[j]];
      if (op == op0 || out.size() >= kMaxReported) continue;
      Hang h;
      h.group = trace.groups[m.group[k]].name;
      h.seq = m.seq[k];
      h.desync = true;
      h.op = std::string(model::CommOpName(op0));
      for (uint32_t i : members) h.reached.push_back(trace.ranks[m.rank_index[i]].rank);
      h.detail = "desync: collective #" + std::to_string(h.seq) + " of group " + GroupLabel(trace.groups[m.group[k]]) +
                 " is " + h.op + " on rank " + std::to_string(trace.ranks[m.rank_index[members[0]]].rank) +
                 " but " + std::string(model::CommOpName(op)) + " on rank " +
                 std::to_string(trace.ranks[m.rank_index[j]].rank);
      out.push_back(std::move(h));
      break;
    }
  }
  // A rank that ran #k-1 and #k+1 of a group but has no #k while the others ran it: the
  // call was skipped, or its record was lost (NCCL would pair its later calls with the
  // others' earlier ones). A rank whose recording paused (recorder switched off at a
  // slightly different collective on each rank) misses several in a row, with others
  // missing around it too: the neighbour rule leaves that out.
  auto ran = [&](uint32_t group, int64_t seq, uint32_t r) {
    auto row = row_of.find({group, seq});
    if (row == row_of.end()) return false;
    for (uint32_t j = m.first[row->second]; j < m.first[row->second + 1]; ++j)
      if (m.rank_index[j] == r && in_window[r][m.row[j]]) return true;
    return false;
  };
  std::vector<uint8_t> present(trace.ranks.size());
  for (uint32_t k = 0; k < m.size() && out.size() < kMaxReported; ++k) {
    if (m.kind[k] != model::MatchKind::kCollective) continue;
    InWindowMembers(trace, in_window, k, &members);
    if (members.empty()) continue;
    const auto& lo = first[m.group[k]];
    const auto& hi = last[m.group[k]];
    std::fill(present.begin(), present.end(), 0);
    for (uint32_t j : members) present[m.rank_index[j]] = 1;
    std::vector<int> skipped;
    for (uint32_t r = 0; r < trace.ranks.size(); ++r)
      if (!present[r] && hi[r] != kNone && lo[r] < m.seq[k] && m.seq[k] < hi[r] && ran(m.group[k], m.seq[k] - 1, r) &&
          ran(m.group[k], m.seq[k] + 1, r))
        skipped.push_back(trace.ranks[r].rank);
    if (skipped.empty()) continue;
    Hang h;
    h.group = trace.groups[m.group[k]].name;
    h.seq = m.seq[k];
    h.missing = skipped;
    h.desync = true;
    for (uint32_t j : members) h.reached.push_back(trace.ranks[m.rank_index[j]].rank);
    const uint32_t j0 = members.front();
    h.op = std::string(model::CommOpName(trace.ranks[m.rank_index[j0]].comms.op[m.row[j0]]));
    h.detail = "desync: rank" + std::string(skipped.size() > 1 ? "s " : " ") + RankList(skipped) +
               " ran collectives #" + std::to_string(h.seq - 1) + " and #" + std::to_string(h.seq + 1) + " of group " +
               GroupLabel(trace.groups[m.group[k]]) + " but has no #" + std::to_string(h.seq) + " (" + h.op +
               " on rank" + (h.reached.size() > 1 ? "s " : " ") + RankList(h.reached) +
               "): the call was skipped there (NCCL then pairs its later calls with the others' earlier ones) "
               "or its record was lost";
    out.push_back(std::move(h));
  }
  for (const auto& [group, by_rank] : last) {
    int64_t top = INT64_MIN;
    for (int64_t s : by_rank) top = std::max(top, s);
    // Ranks that stopped at the same collective are one finding.
    std::map<int64_t, std::vector<uint32_t>> stopped;
    for (uint32_t r = 0; r < by_rank.size(); ++r)
      if (by_rank[r] != kNone && by_rank[r] < top) stopped[by_rank[r]].push_back(r);
    for (const auto& [s, stopped_ranks] : stopped) {
      if (out.size() >= kMaxReported) break;
      auto row = row_of.find({group, s + 1});
      if (row == row_of.end()) continue;
      InWindowMembers(trace, in_window, row->second, &members);
      // A rank whose trace ends before the others started the collective did not stop:
      // its profiler did (traces of one job end at slightly different times).
      model::TimeNs started = INT64_MAX;
      for (uint32_t j : members) started = std::min(started, m.start[j]);
      std::vector<uint32_t> missing;  // the stopped ranks reported (indices in trace.ranks)
      std::vector<int> ranks;          // their rank numbers
      for (uint32_t r : stopped_ranks)
        if (TraceEnd(trace.ranks[r]) > started) missing.push_back(r), ranks.push_back(trace.ranks[r].rank);
      if (ranks.empty()) continue;
      Hang h;
      h.group = trace.groups[group].name;
      h.seq = s + 1;
      h.missing = ranks;
      for (uint32_t j : members) h.reached.push_back(trace.ranks[m.rank_index[j]].rank);
      const uint32_t j0 = members.front();
      h.op = std::string(model::CommOpName(trace.ranks[m.rank_index[j0]].comms.op[m.row[j0]]));
      // How long the others sat in it, and what the missing ranks were doing meanwhile.
      // A recording whose kernel never reported an end has host times only: then the
      // wait is what its recorder kept running afterwards.
      model::TimeNs longest = 0;
      bool untimed = true;
      for (uint32_t j : members) {
        const model::RankTrace& rj = trace.ranks[m.rank_index[j]];
        const bool no_end = (rj.comms.flags[m.row[j]] & model::kCommNoGpuTiming) != 0;
        untimed = untimed && no_end;
        const model::TimeNs until = no_end && rj.alive_until != model::kNoTime ? std::max(rj.alive_until, m.end[j]) : m.end[j];
        longest = std::max(longest, until - m.start[j]);
      }
      h.waited = longest;
      const std::string who = "rank" + std::string(h.reached.size() > 1 ? "s " : " ") + RankList(h.reached);
      h.detail = "rank" + std::string(ranks.size() > 1 ? "s " : " ") + RankList(ranks) + " never reached collective #" +
                 std::to_string(h.seq) + " (" + h.op + ") of group " + GroupLabel(trace.groups[group]) + "; " + who +
                 (untimed ? " enqueued it and its kernel reported no end in the " + Duration(longest) +
                                " its recorder ran afterwards"
                          : " ran it (waiting in it up to " + Duration(longest) + ")") +
                 "; the trace of " + RankList(ranks) + " has nothing of this group after #" + std::to_string(s);
      // The ranks reported only: each lookup without host events may read a file again
      // (under --mpi, asks the process that imported it), once per reported rank.
      for (uint32_t r : missing) {
        const std::string doing = trace.ranks[r].host_events_dropped == 0 ? DoingAt(trace.ranks[r], started)
                                  : doing_at                                ? doing_at(r, started)
                                                                            : std::string();
        if (doing.empty()) continue;
        h.missing_doing.push_back("rank " + std::to_string(trace.ranks[r].rank) + " " + doing);
        h.detail += "; when the others started it, " + h.missing_doing.back();
      }
      out.push_back(std::move(h));
    }
  }
  return out;
}

}  // namespace commlens::analysis
