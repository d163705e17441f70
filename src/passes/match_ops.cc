// The matched-operations table (model::MatchedOps): every op with a group and a sequence
// number, keyed by (job group, kind, sender, receiver, seq) and sorted, so the ranks that
// ran the same collective or the two ends of one message are adjacent. P2p ops without a
// known direction and peer (batched send/recv) are left out: nothing can match them.
#include <algorithm>
#include <tuple>
#include <vector>

#include "passes/passes.h"

namespace commlens::passes {

namespace {

struct Entry {
  uint32_t group;
  uint8_t kind;
  int32_t sender;
  int32_t receiver;
  int64_t seq;
  uint32_t rank_index;
  uint32_t row;

  auto key() const { return std::tie(group, kind, sender, receiver, seq); }
};

Entry EntryOf(const model::RankTrace& r, uint32_t rank_index, uint32_t i) {
  const model::CommOps& c = r.comms;
  const model::ProcessGroup& g = r.groups[c.group[i]];
  Entry e{g.job_group, static_cast<uint8_t>(model::MatchKind::kCollective), -1, -1, c.seq[i], rank_index, i};
  if (c.flags[i] & model::kCommCopyEngine) e.kind = static_cast<uint8_t>(model::MatchKind::kCopyEngine);
  const bool directed = c.op[i] == model::CommOp::kSend || c.op[i] == model::CommOp::kRecv;
  if (directed && c.peer[i] >= 0) {
    // Ranks as the source numbers them in the group (its own rank: the group's |self|,
    // else the global rank).
    const int32_t self = g.self >= 0 ? g.self : r.rank;
    const bool send = c.op[i] == model::CommOp::kSend;
    e.kind = static_cast<uint8_t>(model::MatchKind::kP2p);
    e.sender = send ? self : c.peer[i];
    e.receiver = send ? c.peer[i] : self;
  }
  return e;
}

}  // namespace

void MatchOps(model::Trace* trace) {
  std::vector<Entry> entries;
  for (uint32_t ri = 0; ri < trace->ranks.size(); ++ri) {
    const model::RankTrace& r = trace->ranks[ri];
    for (uint32_t i = 0; i < r.comms.size(); ++i) {
      if (r.comms.group[i] == model::kNoIndex || r.comms.seq[i] < 0) continue;
      // A p2p op whose other end is unknown (batched send/recv, no peer) matches nothing:
      // numbered in its own sequence, it must not join the group's collectives.
      const bool directed = r.comms.op[i] == model::CommOp::kSend || r.comms.op[i] == model::CommOp::kRecv;
      if (model::IsPointToPoint(r.comms.op[i]) && !(directed && r.comms.peer[i] >= 0)) continue;
      entries.push_back(EntryOf(r, ri, i));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.group, a.kind, a.sender, a.receiver, a.seq, a.rank_index, a.row) <
           std::tie(b.group, b.kind, b.sender, b.receiver, b.seq, b.rank_index, b.row);
  });
  model::MatchedOps& m = trace->matched;
  m = {};
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    if (k == 0 || e.key() != entries[k - 1].key()) {
      m.group.push_back(e.group);
      m.kind.push_back(static_cast<model::MatchKind>(e.kind));
      m.seq.push_back(e.seq);
      m.sender.push_back(e.sender);
      m.receiver.push_back(e.receiver);
      m.first.push_back(static_cast<uint32_t>(m.rank_index.size()));
    }
    const model::CommOps& c = trace->ranks[e.rank_index].comms;
    m.rank_index.push_back(e.rank_index);
    m.row.push_back(e.row);
    m.start.push_back(c.start[e.row]);
    m.end.push_back(c.end[e.row]);
  }
  m.first.push_back(static_cast<uint32_t>(m.rank_index.size()));
}

}  // namespace commlens::passes
