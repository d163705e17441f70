// Pipeline-parallel structure (cross_rank.h), detected from point-to-point messages: the
// ranks that exchange messages form chains (stage 0 <-> 1 <-> ... <-> p-1); the first
// stage is the end of the chain that sends first (activations flow forward first). An
// interleaved schedule also sends from the last stage to the first (a ring): there stage
// 0 is the rank that sends first, and the order follows its first message. Per
// stage and step: the GPU's idle share, and where the idle sits: before the stage's
// first message of the step (warm-up), between its first and last (steady state), after
// its last (cool-down). The bubble is the stages' mean idle share, held against the ideal
// (p - 1) / (m + p - 1) for p stages and m micro-batches.
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
  TimeNs send_start;
  TimeNs launched;  // the host time the send was launched (its GPU start when unknown)
};

// When an op was launched on the host: steps are host ranges, and a GPU runs behind its
// host, so an op belongs to the step in which it was launched (as analyze attributes
// kernels to steps).
TimeNs Launched(const model::RankTrace& r, uint32_t op) {
  const uint32_t a = r.comms.activity[op];
  const TimeNs t = a == model::kNoIndex ? model::kNoTime : r.gpu.launch[a];
  return t == model::kNoTime ? r.comms.start[op] : t;
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

}  // namespace

Pipeline DetectPipeline(const model::Trace& trace, const InWindow& in_window,
                        const std::vector<const RankTimeBreakdown*>& times) {
  Pipeline p;
  const model::MatchedOps& m = trace.matched;
  std::vector<Message> messages;
  std::vector<uint32_t> members;
  for (uint32_t k = 0; k < m.size(); ++k) {
    if (m.kind[k] != model::MatchKind::kP2p) continue;
    InWindowMembers(trace, in_window, k, &members);
    if (members.size() != 2) continue;
    uint32_t send = members[0], recv = members[1];
    if (trace.ranks[m.rank_index[send]].comms.op[m.row[send]] != model::CommOp::kSend) std::swap(send, recv);
    const model::RankTrace& sender = trace.ranks[m.rank_index[send]];
    messages.push_back({m.rank_index[send], m.rank_index[recv], m.start[send], Launched(sender, m.row[send])});
  }
  if (messages.empty()) return p;
  std::map<uint32_t, std::set<uint32_t>> adj;
  for (const Message& msg : messages) adj[msg.from].insert(msg.to), adj[msg.to].insert(msg.from);
  for (const auto& [r, n] : adj)
    if (n.size() > 2) return p;  // not a chain: some other p2p pattern
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
  } else {
    if (adj.at(chain.front()).size() == 2) chain = Chain(adj, chain.back());  // started mid-chain
    if (chain.size() < 2) return p;
    if (first_send(chain.back()) < first_send(chain.front())) std::reverse(chain.begin(), chain.end());
  }
  p.detected = true;
  p.stages = static_cast<int>(chain.size());

  // Micro-batches: forward messages from stage 0 to stage 1 per step of stage 0.
  const model::RankTrace& first = trace.ranks[chain[0]];
  uint64_t forward = 0;
  std::vector<std::pair<TimeNs, char>> order;  // stage 0's sends (F) and receives (B), by launch
  for (const Message& msg : messages) {
    if (msg.from == chain[0] && msg.to == chain[1]) ++forward, order.push_back({msg.launched, 'F'});
    if (msg.from == chain[1] && msg.to == chain[0]) order.push_back({msg.launched, 'B'});
  }
  // Per step that has forward messages (the median over such steps); all of them without steps.
  std::vector<int> per_step;
  for (const model::ProfilerStep& step : first.steps) {
    int n = 0;
    for (const Message& msg : messages)
      n += msg.from == chain[0] && msg.to == chain[1] && In(msg.launched, step);
    if (n > 0) per_step.push_back(n);
  }
  std::sort(per_step.begin(), per_step.end());
  p.microbatches = per_step.empty() ? static_cast<int>(forward) : per_step[per_step.size() / 2];
  std::sort(order.begin(), order.end());
  // GPipe: within a step every forward precedes every backward; 1F1B interleaves them.
  // Judged in the first step with forward messages (the first step is often partial).
  const model::ProfilerStep* step0 = nullptr;
  for (const model::ProfilerStep& step : first.steps)
    if (!step0 && std::any_of(order.begin(), order.end(), [&](const auto& o) { return o.second == 'F' && In(o.first, step); }))
      step0 = &step;
  bool backward_seen = false, interleaved = false;
  for (const auto& [t, kind] : order) {
    if (step0 && (t < step0->start || t > step0->end)) continue;
    if (kind == 'B') backward_seen = true;
    else if (backward_seen) interleaved = true;
  }
  p.schedule = interleaved ? "1F1B" : "GPipe (all forward, then all backward)";
  const double stages = p.stages, micro = std::max(p.microbatches, 1);
  p.ideal_fraction = (stages - 1) / (micro + stages - 1);

  double idle_sum = 0;
  for (uint32_t r : chain) {
    const model::RankTrace& rank = trace.ranks[r];
    PipelineStage s;
    s.rank = rank.rank;
    double share = 0;
    for (const StepBreakdown& st : times[r]->steps) share += st.time.idle_pct() / 100.0;
    s.idle_share = times[r]->steps.empty() ? times[r]->total.idle_pct() / 100.0
                                           : share / static_cast<double>(times[r]->steps.size());
    GpuStretches gpu(rank);
    for (const model::ProfilerStep& step : rank.steps) {
      TimeNs lo = INT64_MAX, hi = INT64_MIN;
      for (uint32_t i = 0; i < rank.comms.size(); ++i)
        if (model::IsPointToPoint(rank.comms.op[i]) && In(Launched(rank, i), step))
          lo = std::min(lo, rank.comms.start[i]), hi = std::max(hi, rank.comms.end[i]);
      if (lo > hi) continue;
      s.warmup_idle += gpu.Measure(step.start, lo, model::kNoIndex).idle;
      s.steady_idle += gpu.Measure(lo, hi, model::kNoIndex).idle;
      s.cooldown_idle += gpu.Measure(hi, step.end, model::kNoIndex).idle;
    }
    idle_sum += s.idle_share;
    p.per_stage.push_back(s);
  }
  p.bubble_fraction = idle_sum / stages;
  return p;
}

}  // namespace commlens::analysis
