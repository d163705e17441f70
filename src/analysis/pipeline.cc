// Pipeline-parallel structure (cross_rank.h), detected from point-to-point messages: the
// ranks that exchange messages form chains (stage 0 <-> 1 <-> ... <-> p-1), one per
// data-parallel replica; the first stage is the end of the chain that sends first
// (activations flow forward first). An interleaved schedule also sends from the last
// stage to the first (a ring): there stage 0 is the rank that sends first, the order
// follows its first message, and the counts of forward messages on the ring's links give
// the model chunks per rank (v) and the micro-batches (m): m v on an inner link, m (v - 1)
// from the last rank back to the first, per step.
//
// Ranks that exchange at once are no pipeline: an all-to-all or a halo exchange built from
// send/recv starts each step with messages both ways on every link, whereas a pipeline
// starts with activations going forward while nothing comes back (in 1F1B's steady state
// most messages do overlap one going the other way: the stage graph and the step's first
// messages decide, not the overlap of all of them).
//
// A stage in its bubble is either idle (no GPU activity: nothing launched) or inside a
// send or receive waiting for its peer to start the other end (NCCL's kernel spins; the
// GPU is busy but does no work). Per stage and step: that bubble's share of the step, and
// where it sits: until its first message of the step has ended (warm-up), until its last
// message starts (steady state), the rest (cool-down). The bubble fraction is the stages'
// mean share, held against the schedule's ideal (p - 1) / (m + p - 1), divided by v when
// interleaved. The stage whose compute per step is the largest sets the pace: every other
// stage waits for it (partitioning imbalance).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

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

bool In(TimeNs t, const model::ProfilerStep& s) { return t >= s.start && t <= s.end; }

// Whether ranks exchange rather than pipeline: on nine in ten links and steps, the link's
// first message of the step overlaps one going the other way. |steps| are one rank's
// profiler steps; without them, a link's messages are cut where it was quiet for a
// millisecond, each stretch counts as a step, and half of the stretches starting both
// ways is enough when nine in ten of all messages overlap one going the other way.
bool Exchanges(const std::vector<Message>& messages, const std::vector<model::ProfilerStep>& steps) {
  constexpr TimeNs kQuiet = 1'000'000;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<TimeNs, TimeNs>>> by_direction;
  for (const Message& msg : messages) by_direction[{msg.from, msg.to}].push_back({msg.send_start, msg.send_end});
  for (auto& [dir, spans] : by_direction) std::sort(spans.begin(), spans.end());
  auto paired = [&](uint32_t from, uint32_t to, std::pair<TimeNs, TimeNs> span) {
    auto back = by_direction.find({to, from});
    if (back == by_direction.end()) return false;
    // Spans of one direction do not overlap each other, so the one that starts last
    // before the span's end is the only candidate.
    auto it = std::lower_bound(back->second.begin(), back->second.end(), std::make_pair(span.second, INT64_MIN));
    return it != back->second.begin() && std::prev(it)->second > span.first;
  };
  size_t firsts = 0, both_ways = 0;
  for (const auto& direction : by_direction) {
    const std::pair<uint32_t, uint32_t> dir = direction.first;  // (a lambda cannot capture a binding in clang 14)
    if (dir.first > dir.second && by_direction.count({dir.second, dir.first})) continue;  // the link once
    // The link's messages both ways, by start: (start, end, sent by the lower rank).
    std::vector<std::tuple<TimeNs, TimeNs, bool>> link;
    for (const auto& d : {dir, std::make_pair(dir.second, dir.first)}) {
      auto it = by_direction.find(d);
      if (it == by_direction.end()) continue;
      for (const auto& [a, b] : it->second) link.emplace_back(a, b, d == dir);
    }
    std::sort(link.begin(), link.end());
    auto count = [&](const std::tuple<TimeNs, TimeNs, bool>& m) {
      ++firsts;
      const auto [a, b, forward] = m;
      both_ways += forward ? paired(dir.first, dir.second, {a, b}) : paired(dir.second, dir.first, {a, b});
    };
    if (!steps.empty()) {
      for (const model::ProfilerStep& s : steps) {
        auto it = std::lower_bound(link.begin(), link.end(), std::make_tuple(s.start, INT64_MIN, false));
        if (it != link.end() && std::get<0>(*it) <= s.end) count(*it);
      }
      continue;
    }
    TimeNs busy_until = INT64_MIN;
    for (const auto& m : link) {
      if (busy_until == INT64_MIN || std::get<0>(m) > busy_until + kQuiet) count(m);
      busy_until = std::max(busy_until, std::get<1>(m));
    }
  }
  if (firsts == 0) return false;
  if (!steps.empty()) return both_ways * 10 >= firsts * 9;
  // Stretches cut by quiet times also start inside a pipeline's steady state, where most
  // messages pair: there, half of the firsts paired and nine in ten of all messages.
  size_t all_paired = 0;
  for (const Message& msg : messages) all_paired += paired(msg.from, msg.to, {msg.send_start, msg.send_end});
  return both_ways * 2 >= firsts && all_paired * 10 >= messages.size() * 9;
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
//
// That reading takes every message coming back as a gradient. On two ranks of an
// interleaved schedule it is not (the chunks pass activations both ways), and the open
// count returns to none inside a step. A schedule repeats every step, though: when the
// messages' order (forward or back) repeats with a period holding more forward messages
// than those openings, the steps are the periods, cut where the GPU waited longest.
struct Iteration {
  TimeNs lo, hi;
  int forwards;
};

struct StageIterations {
  std::vector<Iteration> iterations;
  int forwards_per_opening = 0;  // median forward messages until none is open again
  bool regular_openings = false;  // every such stretch had as many (a plain pipeline's flushes)
  int most_open = 0;             // most forward messages not yet answered at once
  bool periodic = false;         // |iterations| are the schedule's periods
};

// The smallest period of the longest tail of |kinds| that repeats it at least three times
// and covers half of |kinds| or more: {period, where the tail starts}, {0, 0} if none.
// The period of a tail of length L is L minus its longest proper border, which the prefix
// function of the reversed sequence gives for every tail at once.
std::pair<size_t, size_t> RepeatingTail(const std::vector<bool>& kinds) {
  const size_t n = kinds.size();
  auto back = [&](size_t i) { return kinds[n - 1 - i]; };
  std::vector<size_t> border(n, 0);
  for (size_t i = 1; i < n; ++i) {
    size_t k = border[i - 1];
    while (k > 0 && back(i) != back(k)) k = border[k - 1];
    border[i] = k + (back(i) == back(k));
  }
  for (size_t len = n; len * 2 >= n && len >= 3; --len) {
    const size_t period = len - border[len - 1];
    if (len >= 3 * period) return {period, n - len};
  }
  return {0, 0};
}

StageIterations Iterations(const model::RankTrace& rank, uint32_t r, uint32_t partner, bool first_stage,
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
  // A batch launches its forward and backward at once: the forward first, or its
  // micro-batch would seem to close before the batch opened the next.
  std::sort(ops.begin(), ops.end(),
            [](const Op& a, const Op& b) { return std::tie(a.launched, b.forward) < std::tie(b.launched, a.forward); });
  StageIterations out;
  std::vector<int> per_opening;
  int open = 0, forwards = 0;
  TimeNs lo = ops.empty() ? 0 : ops.front().start, hi = lo;
  for (const Op& op : ops) {
    hi = std::max(hi, op.end);
    if (op.forward) ++open, ++forwards;
    else if (open > 0) --open;
    out.most_open = std::max(out.most_open, open);
    if (open == 0 && forwards > 0) {
      out.iterations.push_back({lo, hi, forwards});
      per_opening.push_back(forwards);
      lo = hi, forwards = 0;
    }
  }
  if (per_opening.empty()) return out;
  std::sort(per_opening.begin(), per_opening.end());
  out.forwards_per_opening = per_opening[per_opening.size() / 2];
  out.regular_openings = per_opening.front() == per_opening.back();

  std::vector<bool> kinds;
  for (const Op& op : ops) kinds.push_back(op.forward);
  const auto [period, from] = RepeatingTail(kinds);
  if (period == 0) return out;
  const auto forward_count = std::count(kinds.begin() + static_cast<ptrdiff_t>(from),
                                        kinds.begin() + static_cast<ptrdiff_t>(from + period), true);
  if (forward_count * 2 != static_cast<ptrdiff_t>(period) || forward_count <= out.forwards_per_opening) return out;
  // The step boundary: the place in the period where the stage's GPU waited longest for
  // the next message (the median over the periods).
  std::vector<std::vector<TimeNs>> waits(period);
  TimeNs busy = ops.front().end;
  for (size_t i = 1; i < ops.size(); ++i) {
    if (i >= from) waits[(i - from) % period].push_back(std::max<TimeNs>(0, ops[i].start - busy));
    busy = std::max(busy, ops[i].end);
  }
  size_t cut = 0;
  TimeNs longest = -1;
  for (size_t k = 0; k < period; ++k) {
    std::vector<TimeNs>& w = waits[k];
    if (w.empty()) continue;
    std::nth_element(w.begin(), w.begin() + static_cast<ptrdiff_t>(w.size() / 2), w.end());
    if (w[w.size() / 2] > longest) longest = w[w.size() / 2], cut = k;
  }
  // Steps start at from + cut + j * period; what comes before the first is one more step
  // (the first: often longer, or partial when the trace starts inside a step; the stages'
  // median step keeps either from speaking for the schedule); a last step cut short by the
  // end of the trace is left out.
  out.iterations.clear();
  out.periodic = true;
  size_t begin = 0;
  lo = ops.front().start;
  for (size_t next = from + cut; begin < ops.size(); next += period) {
    if (next > ops.size()) break;
    int f = 0;
    hi = lo;
    for (size_t i = begin; i < next; ++i) f += ops[i].forward, hi = std::max(hi, ops[i].end);
    if (f > 0) out.iterations.push_back({lo, hi, f});
    lo = hi, begin = next;
  }
  return out;
}

// The chain of stages in order (stage 0 first), or empty when the messages form none.
std::vector<uint32_t> StageOrder(const std::vector<Message>& messages) {
  std::map<uint32_t, std::set<uint32_t>> adj;
  for (const Message& msg : messages) adj[msg.from].insert(msg.to), adj[msg.to].insert(msg.from);
  for (const auto& [r, n] : adj)
    if (n.size() > 2) return {};  // not a chain: some other p2p pattern
  // Stage 0 is the rank whose first message is a send (every other stage first waits for
  // an activation), judged on each rank's own host clock: its launch order. When that
  // leaves no single rank, the rank that sends first on the aligned GPU clocks.
  auto first_send = [&](uint32_t r) {
    TimeNs t = INT64_MAX;
    for (const Message& msg : messages)
      if (msg.from == r) t = std::min(t, msg.send_start);
    return t;
  };
  auto opens_with_send = [&](uint32_t r) {
    TimeNs send = INT64_MAX, recv = INT64_MAX;
    for (const Message& msg : messages) {
      if (msg.from == r) send = std::min(send, msg.launched);
      if (msg.to == r) recv = std::min(recv, msg.recv_launched);
    }
    return send < recv;
  };
  std::vector<uint32_t> openers;
  for (const auto& [r, n] : adj)
    if (opens_with_send(r)) openers.push_back(r);
  // The chain of the lowest rank; its first stage is the end that sent first.
  std::vector<uint32_t> chain = Chain(adj, adj.begin()->first);
  const bool ring = chain.size() > 2 && adj.at(chain.front()).count(chain.back());
  if (ring) {
    // Interleaved (virtual-stage) schedules send from the last stage back to the first:
    // a ring. Stage 0 is the rank that sends first, and the order follows its first send.
    uint32_t start = chain[0];
    for (uint32_t r : chain)
      if (first_send(r) < first_send(start)) start = r;
    if (openers.size() == 1) start = openers[0];
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
  const bool back_first = openers.size() == 1 ? openers[0] == chain.back() : first_send(chain.back()) < first_send(chain.front());
  if (back_first) std::reverse(chain.begin(), chain.end());
  return chain;
}

// Forward messages per step (the median over the steps that have some) from |from| to
// |to|, counted in |first|'s profiler steps by the send's launch.
int ForwardPerStep(const model::RankTrace& first, uint32_t from, uint32_t to, const std::vector<Message>& messages) {
  std::vector<int> per_step;
  for (const model::ProfilerStep& step : first.steps) {
    int n = 0;
    for (const Message& msg : messages) n += msg.from == from && msg.to == to && In(msg.launched, step);
    if (n > 0) per_step.push_back(n);
  }
  if (per_step.empty()) return 0;
  std::sort(per_step.begin(), per_step.end());
  return per_step[per_step.size() / 2];
}

// The stages and micro-batches torch.distributed.pipelining's action ranges name on a
// rank ("PP:<stage><action><micro-batch>"): {distinct stages, distinct micro-batches},
// {0, 0} when it has none.
std::pair<int, int> NamedActions(const model::RankTrace& rank) {
  std::set<int> stages, micro;
  const model::Annotations& a = rank.annotations;
  for (uint32_t i = 0; i < a.size(); ++i) {
    if (a.device[i] >= 0) continue;  // the GPU projections repeat the host's
    std::string_view name = rank.strings.Get(a.name[i]);
    if (!name.starts_with(model::kPipelineActionPrefix)) continue;
    name.remove_prefix(model::kPipelineActionPrefix.size());
    size_t k = 0;
    int stage = 0, mb = 0;
    while (k < name.size() && k < 6 && name[k] >= '0' && name[k] <= '9') stage = stage * 10 + (name[k++] - '0');
    if (k == 0 || k >= name.size() || std::string_view("FBIW").find(name[k]) == std::string_view::npos) continue;
    const size_t digits = ++k;
    while (k < name.size() && k - digits < 6 && name[k] >= '0' && name[k] <= '9') mb = mb * 10 + (name[k++] - '0');
    if (k == digits || k != name.size()) continue;
    stages.insert(stage), micro.insert(mb);
  }
  return {static_cast<int>(stages.size()), static_cast<int>(micro.size())};
}

// Micro-batches per step, model chunks per rank and the schedule, from stage 0's
// messages with stage 1 (and, on a ring, the last stage's forward messages to stage 0).
void JudgeSchedule(const model::RankTrace& first, const model::RankTrace& last_rank, const std::vector<uint32_t>& chain,
                   bool ring, const std::vector<Message>& messages, Pipeline* p) {
  const uint32_t stage0 = chain[0], stage1 = chain[1];
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
  const StageIterations iterations = Iterations(first, stage0, stage1, true, messages);
  const bool from_steps = !per_step.empty();
  if (per_step.empty())
    for (const Iteration& it : iterations.iterations) per_step.push_back(it.forwards);
  std::sort(per_step.begin(), per_step.end());
  const int inner = per_step.empty() ? static_cast<int>(forward) : per_step[per_step.size() / 2];
  p->microbatches = inner;
  p->virtual_stages = 1;
  // The rule said with the result: the steps counted, then what named m and v.
  const std::string per = from_steps            ? "per profiler step"
                          : iterations.periodic ? "per repeat of stage 0's message order (no profiler steps)"
                                                : "per pipeline iteration (no profiler steps)";
  std::string rule = fmt::format("m: {} forward messages from stage 0 to stage 1 {}; the schedule: the order of its "
                                 "forward and backward messages",
                                 inner, per);
  const auto [named_stages, named_micro] = NamedActions(first);
  // Stage 0's open count returns to none inside a step. In a plain pipeline every message
  // back answers a forward one, and none returns before the flush at the step's end
  // (1F1B's warm-up keeps one ahead). Returning every f >= 2 forwards alike, f dividing
  // the step's count: a plain pipeline flushed k times a step (several schedule steps per
  // profiler step), m = f. Otherwise, on two ranks: the messages back are not all
  // gradients (two_way_chunks).
  const int f = iterations.forwards_per_opening;
  const bool reopens = !ring && f > 0 && f < inner;
  const bool flushes = reopens && f >= 2 && iterations.regular_openings && inner % f == 0;
  const bool two_way_chunks = reopens && !flushes && chain.size() == 2;
  std::string unknown;
  if (chain.size() == 2 && named_stages > 1 && named_micro > 0 && inner % named_micro == 0) {
    // Two ranks: the chunks' messages both ways look alike (m (2v - 1) each way per step),
    // so the schedule's own action names say v.
    p->microbatches = named_micro;
    p->virtual_stages = named_stages;
    rule = fmt::format("m and v: torch.distributed.pipelining's PP: ranges on stage 0's rank ({} stages, {} "
                       "micro-batches; two ranks' messages look alike both ways); the schedule: the order of its "
                       "messages",
                       named_stages, named_micro);
  } else if (flushes) {
    p->microbatches = f;
    rule = fmt::format("m: {} forward messages from stage 0 to stage 1 between the flushes of its pipeline (its "
                       "open messages return to none every {}: {} flushes {}); the schedule: the order of its "
                       "forward and backward messages",
                       f, f, inner / f, per);
  } else if (two_way_chunks) {
    // Without the names: stage 0 sends m (2v - 1) messages per step (v forward, v - 1
    // gradients per micro-batch), so 2v - 1 is an odd factor of the count above 1. When
    // only one divides it (24 = 8 x 3: v = 2) that is v; else the candidates are said.
    std::vector<int> factors;
    for (int d = 3; d * 2 <= inner; d += 2)  // m >= 2: one micro-batch is no schedule
      if (inner % d == 0) factors.push_back(d);
    rule = fmt::format("m and v: stage 0's open messages returned to none inside a step, so the chunks pass "
                       "activations both ways; it sends {} messages {}, which is m (2v - 1)",
                       inner, per);
    if (factors.size() == 1) {
      p->virtual_stages = (factors[0] + 1) / 2;
      p->microbatches = inner / factors[0];
      rule += fmt::format(", and {} is its only odd factor; the schedule: at most {} of its messages open at once "
                          "(fewer than m: 1F1B; m or more: breadth-first)",
                          factors[0], iterations.most_open);
    } else {
      p->virtual_stages = 0;
      p->microbatches = 0;
      std::string options;
      for (int d : factors)
        options += fmt::format("{}{} micro-batches with {} chunks per rank", options.empty() ? "" : " or ", inner / d,
                               (d + 1) / 2);
      unknown = fmt::format(
          "unknown schedule (two ranks pass model chunks both ways: stage 0 sends {} messages per step, which fits {})",
          inner, options.empty() ? "no whole number of chunks" : options);
    }
  } else if (ring) {
    // m v forward messages per step on an inner link, m (v - 1) on the way back to stage 0.
    // Without profiler steps, the ratio of the whole window's counts gives v.
    int wrap = ForwardPerStep(first, chain.back(), stage0, messages), along = inner;
    if (first.steps.empty()) {
      along = wrap = 0;
      for (const Message& msg : messages) along += msg.from == stage0 && msg.to == stage1, wrap += msg.from == chain.back() && msg.to == stage0;
    }
    const bool whole = wrap > 0 && along > wrap && along % (along - wrap) == 0;
    p->virtual_stages = whole ? along / (along - wrap) : 0;
    p->microbatches = whole ? inner / p->virtual_stages : 0;
    rule = fmt::format("m and v: the ring's forward messages, {} from stage 0 to 1 (m v) and {} from the last stage "
                       "back to stage 0 (m (v - 1)), {}; the schedule: the order of stage 0's messages",
                       along, wrap, first.steps.empty() ? "over the whole window" : "per profiler step");
  }
  p->schedule_rule = rule;
  // GPipe: within a step every forward precedes every backward; 1F1B interleaves them.
  // Judged in the first step with forward messages (the first step is often partial);
  // without steps, in the first iteration (until the open micro-batches first return to
  // none). On stage 0 and on the last stage: with as few micro-batches as stages, stage
  // 0's forwards all precede its backwards in 1F1B too, while the last stage alternates.
  auto interleaves = [&](std::vector<std::pair<TimeNs, char>> order, const std::vector<model::ProfilerStep>& steps) {
    // At one launch (a batch), the forward first.
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.first, a.second == 'B') < std::make_pair(b.first, b.second == 'B');
    });
    const model::ProfilerStep* step0 = nullptr;
    for (const model::ProfilerStep& step : steps)
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
    return interleaved;
  };
  // The last stage's own receives of activations (F) and sends of gradients (B), in its
  // launch order, within its own steps (it starts the next step while stage 0 still runs
  // its backwards).
  std::vector<std::pair<TimeNs, char>> last_order;
  const uint32_t last = chain.back(), before = chain[chain.size() - 2];
  for (const Message& msg : messages) {
    if (msg.from == before && msg.to == last) last_order.push_back({msg.recv_launched, 'F'});
    if (msg.from == last && msg.to == before) last_order.push_back({msg.launched, 'B'});
  }
  // Two ranks passing chunks both ways: which messages are gradients is not known, but
  // breadth-first sends every micro-batch's first chunk before any comes back, while
  // interleaved 1F1B keeps fewer than m in flight.
  const bool interleaved =
      two_way_chunks ? iterations.most_open < p->microbatches
                     : interleaves(order, first.steps) || (chain.size() > 2 && !ring && interleaves(last_order, last_rank.steps));
  if (!unknown.empty()) {
    p->schedule = unknown;
  } else if (p->virtual_stages == 1) {
    p->schedule = interleaved ? "1F1B" : "GPipe (all forward, then all backward)";
  } else if (p->virtual_stages == 0) {
    p->schedule = "unknown schedule (the last stage sends to the first, but its messages are no whole number of "
                  "model chunks per rank)";
  } else {
    p->schedule = fmt::format("{} with {} model chunks per rank",
                              interleaved ? "interleaved 1F1B" : "looped GPipe (breadth-first)", p->virtual_stages);
  }
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
  std::vector<TimeNs> computes;
  auto add = [&](int64_t number, TimeNs lo, TimeNs first_end, TimeNs last_start, TimeNs hi) {
    PipelineStep one;
    one.step = number;
    one.length = hi - lo;
    one.warmup_idle = waits.BubbleIn(gpu, r, has_timeline, lo, first_end);
    one.steady_idle = waits.BubbleIn(gpu, r, has_timeline, first_end, last_start);
    one.cooldown_idle = waits.BubbleIn(gpu, r, has_timeline, last_start, hi);
    one.compute = has_timeline ? gpu.Measure(r, lo, hi, model::kNoIndex).compute : 0;
    computes.push_back(one.compute);
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
    for (const Iteration& it : Iterations(rank, r, partner, at == 0, messages).iterations) {
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
    std::sort(computes.begin(), computes.end());
    s.compute = computes[computes.size() / 2];
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
  // Activations and gradients are a link's large messages: the small ones (the shapes
  // torch.distributed.pipelining's stages exchange before the first step, a stray
  // object) are left out, below a sixteenth of the link's median size.
  {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<int64_t>> sizes;
    auto bytes = [&](const Message& msg) { return trace.ranks[msg.from].comms.bytes[msg.send_op]; };
    for (const Message& msg : messages)
      if (bytes(msg) >= 0) sizes[std::minmax(msg.from, msg.to)].push_back(bytes(msg));
    std::map<std::pair<uint32_t, uint32_t>, int64_t> median;
    for (auto& [link, v] : sizes) {
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      median[link] = v[v.size() / 2];
    }
    std::erase_if(messages, [&](const Message& msg) {
      const int64_t b = bytes(msg);
      auto it = median.find(std::minmax(msg.from, msg.to));
      return b >= 0 && it != median.end() && b < it->second / 16;
    });
  }
  if (messages.empty()) return p;
  // The pipelines: the chains (or rings) of ranks the messages join, one per data-parallel
  // replica, in the order of their lowest rank.
  std::map<uint32_t, uint32_t> parent;
  std::function<uint32_t(uint32_t)> root = [&](uint32_t r) {
    auto it = parent.try_emplace(r, r).first;
    return it->second == r ? r : it->second = root(it->second);
  };
  for (const Message& msg : messages) parent[root(msg.from)] = root(msg.to);
  std::map<uint32_t, std::vector<Message>> components;
  for (const Message& msg : messages) components[root(msg.from)].push_back(msg);
  std::vector<std::vector<uint32_t>> chains;
  std::vector<std::vector<Message>> chain_messages;
  for (auto& [r, msgs] : components) {
    const std::vector<uint32_t> chain = StageOrder(msgs);
    if (chain.empty() || Exchanges(msgs, trace.ranks[chain[0]].steps)) continue;
    chains.push_back(chain);
    chain_messages.push_back(std::move(msgs));
  }
  // Replicas of one pipeline have its depth; another depth is some other pattern.
  if (chains.empty()) return p;
  const size_t depth = chains[0].size();
  p.detected = true;
  p.stages = static_cast<int>(depth);
  const std::vector<P2pWaits> waits = WaitsOf(messages, trace.ranks.size());
  std::vector<double> replica_bubble;
  for (size_t c = 0; c < chains.size(); ++c) {
    const std::vector<uint32_t>& chain = chains[c];
    if (chain.size() != depth) continue;
    const std::vector<Message>& msgs = chain_messages[c];
    // The schedule from the first replica (the replicas run one program). A ring: the last
    // stage also talks to the first.
    if (replica_bubble.empty()) {
      const bool ring = depth > 2 && std::any_of(msgs.begin(), msgs.end(), [&](const Message& msg) {
                          return std::minmax(msg.from, msg.to) == std::minmax(chain.front(), chain.back());
                        });
      JudgeSchedule(trace.ranks[chain[0]], trace.ranks[chain.back()], chain, ring, msgs, &p);
    }
    double share_sum = 0;
    for (size_t at = 0; at < chain.size(); ++at) {
      p.idle_known = p.idle_known && trace.ranks[chain[at]].GpuActivityCount() > 0;
      PipelineStage s = MeasureStage(trace, chain, at, msgs, waits[chain[at]], gpu);
      s.stage = static_cast<int>(at);
      s.replica = static_cast<int>(replica_bubble.size());
      share_sum += s.idle_share;
      p.per_stage.push_back(std::move(s));
    }
    replica_bubble.push_back(share_sum / static_cast<double>(depth));
  }
  p.replicas = static_cast<int>(replica_bubble.size());
  double sum = 0;
  for (double b : replica_bubble) sum += b;
  p.bubble_fraction = sum / static_cast<double>(replica_bubble.size());
  const auto [lo, hi] = std::minmax_element(replica_bubble.begin(), replica_bubble.end());
  p.replica_spread = *hi - *lo;
  p.replica_bubble = replica_bubble;
  const double stages = p.stages, micro = std::max(p.microbatches, 1), v = std::max(p.virtual_stages, 1);
  p.ideal_fraction = (stages - 1) / (micro + stages - 1) / v;
  // The pace: each stage's compute per step (the mean over replicas); the largest sets it
  // when it exceeds the median stage's by a fifth (the last stage also computes the loss).
  if (p.idle_known) {
    std::vector<double> compute(depth, 0.0);
    for (const PipelineStage& s : p.per_stage) compute[s.stage] += static_cast<double>(s.compute) / p.replicas;
    std::vector<double> sorted = compute;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[depth / 2];
    const size_t top = static_cast<size_t>(std::max_element(compute.begin(), compute.end()) - compute.begin());
    if (median > 0 && compute[top] > 1.2 * median) {
      p.pace_stage = static_cast<int>(top);
      p.pace_compute = static_cast<TimeNs>(compute[top]);
      p.median_compute = static_cast<TimeNs>(median);
    }
    // Each stage's bubble were the schedule's compute all the step: the slowest stage runs
    // its m v chunks back to back, and the others' chunks fill and drain the pipe once,
    // T = C_max + (sum C - C_max) / (m v) ((m v + p - 1) / (m v) C when balanced).
    double total = 0;
    for (double c : compute) total += c;
    const double slowest = sorted.back();
    const double paced_step = slowest + (total - slowest) / (micro * v);
    if (slowest > 0 && p.microbatches > 0 && p.virtual_stages > 0)
      for (PipelineStage& s : p.per_stage) s.paced_ideal = std::max(0.0, 1.0 - static_cast<double>(s.compute) / paced_step);
  }
  return p;
}

}  // namespace commlens::analysis
