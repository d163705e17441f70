// Pipeline-parallel structure (cross_rank.h), detected from point-to-point messages: the
// ranks that exchange messages form chains (stage 0 <-> 1 <-> ... <-> p-1); the first
// stage is the end of the chain that sends first (activations flow forward first). An
// interleaved schedule also sends from the last stage to the first (a ring): there stage
// 0 is the rank that sends first, and the order follows its first message.
//
// A stage in its bubble is either idle (no GPU activity: nothing launched) or inside a
// send or receive waiting for its peer to start the other end (NCCL's kernel spins; the
// GPU is busy but does no work). Per stage and step: that bubble's share of the step, and
// where it sits: until its first message of the step has ended (warm-up), until its last
// message starts (steady state), the rest (cool-down). The bubble fraction is the stages'
// mean share, held against the ideal (p - 1) / (m + p - 1) for p stages and m
// micro-batches.
#include <algorithm>
#include <map>
#include <set>

#include "analysis/cross_rank_parts.h"
#include "analysis/gpu_stretch.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

struct Message {
  uint32_t from, to;  // rank indices
  uint32_t send_op, recv_op;  // rows in the ranks' comms
  TimeNs send_start, recv_start;  // GPU (aligned)
  TimeNs send_end;
  TimeNs launched;       // the host time the send was launched (its GPU start when unknown)
  TimeNs recv_launched;  // the same for the receive, on the receiver's host
};

// One rank's stretches in which its p2p ops waited for the peer to start the other end.
struct P2pWaits {
  std::vector<std::pair<TimeNs, TimeNs>> spans;  // by start
  TimeNs longest = 0;

  // Bubble time in [lo, hi): GPU idle, plus waiting that no compute kernel overlapped
  // (each moment counted once when two streams wait at once).
  TimeNs BubbleIn(StretchSource& gpu, size_t rank, bool has_timeline, TimeNs lo, TimeNs hi) const {
    if (hi <= lo) return 0;
    // Without a kernel timeline (recordings) idle time is unknown: waiting only.
    TimeNs bubble = has_timeline ? gpu.Measure(rank, lo, hi, model::kNoIndex).idle : 0, covered = lo;
    auto it = std::lower_bound(spans.begin(), spans.end(), std::make_pair(lo - longest, INT64_MIN));
    for (; it != spans.end() && it->first < hi; ++it) {
      const TimeNs a = std::max(it->first, covered), b = std::min(it->second, hi);
      if (b <= a) continue;
      if (has_timeline) bubble += std::max<TimeNs>(0, (b - a) - gpu.Measure(rank, a, b, model::kNoIndex).compute);
      else bubble += b - a;
      covered = b;
    }
    return bubble;
  }
};

// Messages between two ranks that flow both ways at once (an all-to-all or a halo
// exchange built from grouped send/recv) are no pipeline: there activations go forward
// while nothing comes back (warm-up) and gradients come back while nothing goes forward
// (cool-down). True when nine in ten messages overlap one going the other way.
bool MostlyExchanges(const std::vector<Message>& messages) {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<TimeNs, TimeNs>>> by_direction;
  for (const Message& msg : messages) by_direction[{msg.from, msg.to}].push_back({msg.send_start, msg.send_end});
  for (auto& [dir, spans] : by_direction) std::sort(spans.begin(), spans.end());
  size_t paired = 0;
  for (const auto& [dir, spans] : by_direction) {
    auto back = by_direction.find({dir.second, dir.first});
    if (back == by_direction.end()) continue;
    const auto& other = back->second;
    for (const auto& [a, b] : spans) {
      // Spans of one direction do not overlap each other, so the one that starts last
      // before |b| is the only candidate.
      auto it = std::lower_bound(other.begin(), other.end(), std::make_pair(b, INT64_MIN));
      if (it != other.begin() && std::prev(it)->second > a) ++paired;
    }
  }
  return paired * 10 >= messages.size() * 9;
}

std::vector<P2pWaits> WaitsOf(const std::vector<Message>& messages, size_t ranks) {
  std::vector<P2pWaits> waits(ranks);
  auto add = [&](uint32_t r, TimeNs a, TimeNs b) {
    waits[r].spans.push_back({a, b});
    waits[r].longest = std::max(waits[r].longest, b - a);
  };
  for (const Message& msg : messages) {
    if (msg.send_start < msg.recv_start) add(msg.from, msg.send_start, msg.recv_start);
    if (msg.recv_start < msg.send_start) add(msg.to, msg.recv_start, msg.send_start);
  }
  for (P2pWaits& w : waits) std::sort(w.spans.begin(), w.spans.end());
  return waits;
}

bool In(TimeNs t, const model::ProfilerStep& s) { return t >= s.start && t <= s.end; }

// The chain through |start| in an undirected graph of degree <= 2, in order.
std::vector<uint32_t> Chain(const std::map<uint32_t, std::set<uint32_t>>& adj, uint32_t start) {
  std::vector<uint32_t> chain = {start};
  uint32_t prev = start, at = start;
  for (;;) {
    const auto& next = adj.at(at);
    auto it = std::find_if(next.begin(), next.end(), [&](uint32_t n) { return n != prev; });
    if (it == next.end() || std::find(chain.begin(), chain.end(), *it) != chain.end()) return chain;
    prev = at;
    at = *it;
    chain.push_back(at);
  }
}

// Iterations of stage |r| when the trace has no profiler steps: with its partner stage
// (the next one for stage 0, the previous one for the others), forward messages open a
// micro-batch and backward ones close it; an iteration ends when none is open. Each is
// the GPU stretch from the end of the previous one (the first: its first message's
// start) to the end of its last message; |forwards| counts its forward messages.
struct Iteration {
  TimeNs lo, hi;
  int forwards;
};

std::vector<Iteration> Iterations(const model::RankTrace& rank, uint32_t r, uint32_t partner, bool first_stage,
                                  const std::vector<Message>& messages) {
  struct Op {
    TimeNs launched, start, end;
    bool forward;
  };
  std::vector<Op> ops;
  for (const Message& msg : messages) {
    if (msg.from == r && msg.to == partner)
      ops.push_back({msg.launched, rank.comms.start[msg.send_op], rank.comms.end[msg.send_op], first_stage});
    if (msg.from == partner && msg.to == r)
      ops.push_back({msg.recv_launched, rank.comms.start[msg.recv_op], rank.comms.end[msg.recv_op], !first_stage});
  }
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.launched < b.launched; });
  std::vector<Iteration> out;
  int open = 0, forwards = 0;
  TimeNs lo = ops.empty() ? 0 : ops.front().start, hi = lo;
  for (const Op& op : ops) {
    hi = std::max(hi, op.end);
    if (op.forward) ++open, ++forwards;
    else if (open > 0) --open;
    if (open == 0 && forwards > 0) {
      out.push_back({lo, hi, forwards});
      lo = hi, forwards = 0;
    }
  }
  return out;
}

// The chain of stages in order (stage 0 first), or empty when the messages form none.
std::vector<uint32_t> StageOrder(const std::vector<Message>& messages) {
  std::map<uint32_t, std::set<uint32_t>> adj;
  for (const Message& msg : messages) adj[msg.from].insert(msg.to), adj[msg.to].insert(msg.from);
  for (const auto& [r, n] : adj)
    if (n.size() > 2) return {};  // not a chain: some other p2p pattern
  auto first_send = [&](uint32_t r) {
    TimeNs t = INT64_MAX;
    for (const Message& msg : messages)
      if (msg.from == r) t = std::min(t, msg.send_start);
    return t;
  };
  // The chain of the lowest rank; its first stage is the end that sent first.
  std::vector<uint32_t> chain = Chain(adj, adj.begin()->first);
  const bool ring = chain.size() > 2 && adj.at(chain.front()).count(chain.back());
  if (ring) {
    // Interleaved (virtual-stage) schedules send from the last stage back to the first:
    // a ring. Stage 0 is the rank that sends first, and the order follows its first send.
    uint32_t start = chain[0];
    for (uint32_t r : chain)
      if (first_send(r) < first_send(start)) start = r;
    TimeNs earliest = INT64_MAX;
    uint32_t next = start;
    for (const Message& msg : messages)
      if (msg.from == start && msg.send_start < earliest) earliest = msg.send_start, next = msg.to;
    auto at = std::find(chain.begin(), chain.end(), start);
    std::rotate(chain.begin(), at, chain.end());
    if (chain.size() > 1 && chain[1] != next) std::reverse(chain.begin() + 1, chain.end());
    return chain;
  }
  if (adj.at(chain.front()).size() == 2) chain = Chain(adj, chain.back());  // started mid-chain
  if (chain.size() < 2) return {};
  if (first_send(chain.back()) < first_send(chain.front())) std::reverse(chain.begin(), chain.end());
  return chain;
}

// Micro-batches per step and the schedule, from stage 0's messages with stage 1.
void JudgeSchedule(const model::RankTrace& first, uint32_t stage0, uint32_t stage1, const std::vector<Message>& messages,
                   Pipeline* p) {
  uint64_t forward = 0;
  // Stage 0's own sends to stage 1 (F) and receives from it (B), in the order its host
  // launched them: the program's order (another host's clock would not do: hosts run
  // ahead of their GPUs by different amounts).
  std::vector<std::pair<TimeNs, char>> order;
  for (const Message& msg : messages) {
    if (msg.from == stage0 && msg.to == stage1) ++forward, order.push_back({msg.launched, 'F'});
    if (msg.from == stage1 && msg.to == stage0) order.push_back({msg.recv_launched, 'B'});
  }
  // Per step that has forward messages (the median over such steps); without profiler
  // steps, per iteration of the pipeline.
  std::vector<int> per_step;
  for (const model::ProfilerStep& step : first.steps) {
    int n = 0;
    for (const Message& msg : messages) n += msg.from == stage0 && msg.to == stage1 && In(msg.launched, step);
    if (n > 0) per_step.push_back(n);
  }
  if (per_step.empty())
    for (const Iteration& it : Iterations(first, stage0, stage1, true, messages)) per_step.push_back(it.forwards);
  std::sort(per_step.begin(), per_step.end());
  p->microbatches = per_step.empty() ? static_cast<int>(forward) : per_step[per_step.size() / 2];
  std::sort(order.begin(), order.end());
  // GPipe: within a step every forward precedes every backward; 1F1B interleaves them.
  // Judged in the first step with forward messages (the first step is often partial);
  // without steps, in the first iteration (until stage 0's open micro-batches first
  // return to none).
  const model::ProfilerStep* step0 = nullptr;
  for (const model::ProfilerStep& step : first.steps)
    if (!step0 && std::any_of(order.begin(), order.end(), [&](const auto& o) { return o.second == 'F' && In(o.first, step); }))
      step0 = &step;
  bool backward_seen = false, interleaved = false;
  int open = 0;
  for (const auto& [t, kind] : order) {
    if (step0 && (t < step0->start || t > step0->end)) continue;
    if (kind == 'B') {
      backward_seen = true, open = std::max(open - 1, 0);
    } else {
      interleaved = interleaved || backward_seen;
      ++open;
    }
    if (!step0 && backward_seen && open == 0) break;
  }
  p->schedule = interleaved ? "1F1B" : "GPipe (all forward, then all backward)";
}

// Stage |at| of |chain|: its bubble per profiler step (per pipeline iteration without
// steps), where it sits, and the median share.
PipelineStage MeasureStage(const model::Trace& trace, const std::vector<uint32_t>& chain, size_t at,
                           const std::vector<Message>& messages, const P2pWaits& waits, StretchSource& gpu) {
  const uint32_t r = chain[at];
  const model::RankTrace& rank = trace.ranks[r];
  PipelineStage s;
  s.rank = rank.rank;
  const bool has_timeline = rank.GpuActivityCount() > 0;
  std::vector<double> shares;
  auto add = [&](int64_t number, TimeNs lo, TimeNs first_end, TimeNs last_start, TimeNs hi) {
    PipelineStep one;
    one.step = number;
    one.length = hi - lo;
    one.warmup_idle = waits.BubbleIn(gpu, r, has_timeline, lo, first_end);
    one.steady_idle = waits.BubbleIn(gpu, r, has_timeline, first_end, last_start);
    one.cooldown_idle = waits.BubbleIn(gpu, r, has_timeline, last_start, hi);
    s.warmup_idle += one.warmup_idle, s.steady_idle += one.steady_idle, s.cooldown_idle += one.cooldown_idle;
    if (hi > lo) shares.push_back(one.share());
    s.steps.push_back(one);
  };
  // The stage's messages |in| a stretch: the first to end, the last to start.
  auto bounds = [&](auto&& in, TimeNs* first_end, TimeNs* last_start) {
    *first_end = INT64_MAX, *last_start = INT64_MIN;
    for (const Message& msg : messages) {
      if (msg.from != r && msg.to != r) continue;
      const bool sent = msg.from == r;
      const uint32_t i = sent ? msg.send_op : msg.recv_op;
      if (in(sent ? msg.launched : msg.recv_launched, i))
        *first_end = std::min(*first_end, rank.comms.end[i]), *last_start = std::max(*last_start, rank.comms.start[i]);
    }
    return *first_end != INT64_MAX;
  };
  TimeNs first_end, last_start;
  for (const model::ProfilerStep& step : rank.steps) {
    if (!bounds([&](TimeNs launched, uint32_t) { return In(launched, step); }, &first_end, &last_start)) continue;
    first_end = std::clamp(first_end, step.start, step.end);
    last_start = std::clamp(last_start, first_end, step.end);
    add(step.number, step.start, first_end, last_start, step.end);
  }
  if (s.steps.empty()) {  // no profiler steps with messages: the pipeline's own iterations
    const uint32_t partner = at == 0 ? chain[1] : chain[at - 1];
    int64_t index = 0;
    for (const Iteration& it : Iterations(rank, r, partner, at == 0, messages)) {
      auto inside = [&](TimeNs, uint32_t i) { return rank.comms.end[i] > it.lo && rank.comms.end[i] <= it.hi; };
      if (!bounds(inside, &first_end, &last_start)) continue;
      add(index++, it.lo, first_end, std::clamp(last_start, first_end, it.hi), it.hi);
    }
  }
  // The median step: a first step behind a slow start (allocation, autotuning) does not
  // speak for the schedule.
  if (!shares.empty()) {
    std::sort(shares.begin(), shares.end());
    const size_t n = shares.size();
    s.idle_share = n % 2 ? shares[n / 2] : (shares[n / 2 - 1] + shares[n / 2]) / 2;
  }
  return s;
}

}  // namespace

Pipeline DetectPipeline(const model::Trace& trace, const InWindow& in_window, StretchSource& gpu) {
  Pipeline p;
  const model::MatchedOps& m = trace.matched;
  std::vector<Message> messages;
  std::vector<uint32_t> members;
  for (uint32_t k = 0; k < m.size(); ++k) {
    if (m.kind[k] != model::MatchKind::kP2p) continue;
    InWindowMembers(trace, in_window, k, &members);
    if (members.size() != 2 || !model::AllGpuTimed(trace, k)) continue;
    uint32_t send = members[0], recv = members[1];
    if (trace.ranks[m.rank_index[send]].comms.op[m.row[send]] != model::CommOp::kSend) std::swap(send, recv);
    const model::RankTrace& sender = trace.ranks[m.rank_index[send]];
    const model::RankTrace& receiver = trace.ranks[m.rank_index[recv]];
    messages.push_back({m.rank_index[send], m.rank_index[recv], m.row[send], m.row[recv], m.start[send], m.start[recv],
                        m.end[send], Launched(sender, m.row[send]), Launched(receiver, m.row[recv])});
  }
  if (messages.empty() || MostlyExchanges(messages)) return p;
  const std::vector<uint32_t> chain = StageOrder(messages);
  if (chain.empty()) return p;
  p.detected = true;
  p.stages = static_cast<int>(chain.size());
  JudgeSchedule(trace.ranks[chain[0]], chain[0], chain[1], messages, &p);
  const double stages = p.stages, micro = std::max(p.microbatches, 1);
  p.ideal_fraction = (stages - 1) / (micro + stages - 1);

  const std::vector<P2pWaits> waits = WaitsOf(messages, trace.ranks.size());
  double share_sum = 0;
  for (size_t at = 0; at < chain.size(); ++at) {
    p.idle_known = p.idle_known && trace.ranks[chain[at]].GpuActivityCount() > 0;
    p.per_stage.push_back(MeasureStage(trace, chain, at, messages, waits[chain[at]], gpu));
    share_sum += p.per_stage.back().idle_share;
  }
  p.bubble_fraction = share_sum / stages;
  return p;
}

}  // namespace commlens::analysis
