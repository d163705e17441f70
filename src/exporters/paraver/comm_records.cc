#include "exporters/paraver/comm_records.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "exporters/paraver/paraver_ids.h"

namespace commlens::exporters::paraver {

namespace {

struct Member {
  OpPlace place;
  model::CommOp op;
  int64_t bytes;
};

// The kept members of matched row |k|, in rank order.
void KeptMembers(const model::Trace& trace, const Layout& layout, size_t k, std::vector<Member>* out) {
  out->clear();
  const model::MatchedOps& m = trace.matched;
  for (uint32_t i = m.first[k]; i < m.first[k + 1]; ++i) {
    std::optional<OpPlace> place = layout.PlaceOf(m.rank_index[i], m.row[i]);
    if (!place) continue;
    const model::CommOps& c = trace.ranks[m.rank_index[i]].comms;
    out->push_back({*place, c.op[m.row[i]], c.bytes[m.row[i]]});
  }
}

void AddP2p(const std::vector<Member>& members, std::vector<CommRecord>* out) {
  auto send = std::find_if(members.begin(), members.end(), [](const Member& x) { return x.op == model::CommOp::kSend; });
  auto recv = std::find_if(members.begin(), members.end(), [](const Member& x) { return x.op == model::CommOp::kRecv; });
  if (send == members.end() || recv == members.end()) return;
  out->push_back({send->place.start, recv->place.start, recv->place.end, send->place.thread, recv->place.thread,
                  std::max<int64_t>(send->bytes, 0), kTagP2p});
}

void AddCollective(const std::vector<Member>& members, int32_t tag, std::vector<CommRecord>* out) {
  if (members.size() < 2) return;
  size_t last = 0;
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i].place.start > members[last].place.start) last = i;
  const OpPlace& to = members[last].place;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i == last) continue;
    const Member& from = members[i];
    out->push_back({from.place.start, to.start, to.start, from.place.thread, to.thread,
                    std::max<int64_t>(from.bytes, 0), tag});
  }
}

}  // namespace

std::vector<CommRecord> BuildCommRecords(const model::Trace& trace, const Layout& layout) {
  std::vector<CommRecord> out;
  std::vector<Member> members;
  const model::MatchedOps& m = trace.matched;
  for (size_t k = 0; k < m.size(); ++k) {
    KeptMembers(trace, layout, k, &members);
    switch (m.kind[k]) {
      case model::MatchKind::kP2p: AddP2p(members, &out); break;
      case model::MatchKind::kCollective: AddCollective(members, kTagCollective, &out); break;
      case model::MatchKind::kCopyEngine: AddCollective(members, kTagCopyEngine, &out); break;
    }
  }
  std::sort(out.begin(), out.end(), [](const CommRecord& a, const CommRecord& b) {
    return std::tie(a.send, a.from, a.to, a.recv) < std::tie(b.send, b.from, b.to, b.recv);
  });
  return out;
}

void AppendCommLine(const CommRecord& c, const Layout& layout, fmt::memory_buffer* out) {
  const Thread& from = layout.threads()[c.from];
  const Thread& to = layout.threads()[c.to];
  const model::TimeNs o = layout.origin();
  fmt::format_to(fmt::appender(*out), "3:0:1:{}:{}:{}:{}:0:1:{}:{}:{}:{}:{}:{}\n", from.task, from.thread,
                 c.send - o, c.send - o, to.task, to.thread, c.recv - o, c.recv_physical - o, c.size, c.tag);
}

}  // namespace commlens::exporters::paraver
