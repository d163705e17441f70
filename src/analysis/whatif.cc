#include "analysis/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <numeric>
#include <unordered_map>

#include "analysis/collectives.h"
#include "common/saturating.h"
#include "common/strings.h"
#include "model/bus_bandwidth.h"

namespace commlens::analysis {

namespace {

using model::TimeNs;

// Each rank index's pipeline stage; |none| for a rank outside the stages or a job without
// a pipeline.
std::vector<int> StageOfRanks(const model::Trace& trace, const Pipeline& pipe, int none) {
  std::vector<int> stage(trace.ranks.size(), none);
  if (!pipe.detected) return stage;
  for (const PipelineStage& st : pipe.per_stage)
    for (uint32_t ri = 0; ri < trace.ranks.size(); ++ri)
      if (trace.ranks[ri].rank == st.rank) stage[ri] = st.stage;
  return stage;
}

constexpr uint32_t kNone = UINT32_MAX;
// An activity that starts more than kSlack after its own stream let it, and within
// kCrossStream of another stream's activity ending, waits for that activity.
constexpr TimeNs kSlack = 5'000;
constexpr TimeNs kCrossStream = 50'000;
// An activity that starts this long after its stream let it waited for something: for
// whatever ended last on another stream before it, however long before.
constexpr TimeNs kLongWait = 1'000'000;
// A transfer below this (a member whose clock runs ahead) is not a transfer: 0.
constexpr TimeNs kNegativeTransfer = -10'000'000;

struct Node {
  uint32_t rank = 0;  // index in Trace::ranks
  uint32_t kind = 0;  // index in the kinds (activity names)
  uint32_t row = kNone;        // its GPU activity (a row of the rank's gpu table)
  uint32_t job_group = kNone;  // its communication's process group (Trace::groups)
  TimeNs start = 0, end = 0;
  TimeNs delay = 0;     // measured launch delay
  TimeNs transfer = 0;  // group nodes: end - the latest start of their groups' members
  uint32_t deps[2] = {kNone, kNone};
  bool grouped = false;
  bool extra = false;  // beyond the typical count of its kind on a rank in the step
  bool fix_extra = false;  // beyond its peers' typical count: what fixing its rank takes away
  uint32_t occurrence = 0;     // its rank's k-th activity of its kind in the step (by start)
  TimeNs typical_delay = 0;    // the median launch delay of the k-th of its kind over its peers (own: its own)
};

// One step of the job: its nodes (by rank, then start), their groups, the step's start.
struct StepGraph {
  int64_t number = 0;
  TimeNs t0 = 0;
  std::vector<Node> nodes;
  std::vector<std::vector<uint32_t>> groups;       // members (node indices)
  std::vector<std::vector<uint32_t>> node_groups;  // per node, its groups
  std::vector<std::vector<uint32_t>> successors;   // per node
  TimeNs measured = 0;                              // max end - t0
};

// Per node: duration, transfer and launch delay of one replay.
struct Frame {
  std::vector<TimeNs> duration, transfer, delay;
};

// The replay of one step: its step time; |unresolved| counts the nodes that a cycle in
// the model (members whose clocks disagree) held back, finished on the members started.
// |times|, when given, receives each node's replayed start and end.
TimeNs Replay(const StepGraph& g, const Frame& f, uint64_t* unresolved,
              std::vector<std::pair<TimeNs, TimeNs>>* times = nullptr) {
  const size_t n = g.nodes.size();
  std::vector<TimeNs> start(n, 0), end(n, 0);
  std::vector<uint8_t> started(n, 0), ended(n, 0);
  std::vector<uint32_t> waiting(n, 0), groups_left(n, 0);
  std::vector<uint32_t> group_started(g.groups.size(), 0);
  std::vector<TimeNs> group_max(g.groups.size(), INT64_MIN);
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t d : g.nodes[i].deps) waiting[i] += d != kNone;
    groups_left[i] = static_cast<uint32_t>(g.node_groups[i].size());
    if (waiting[i] == 0) ready.push_back(i);
  }
  TimeNs last = g.t0;
  std::vector<uint32_t> stack;
  auto finish = [&](uint32_t i, TimeNs t) {
    if (ended[i]) return;  // its last group completed as it started
    end[i] = t, ended[i] = 1;
    last = std::max(last, t);
    for (uint32_t s : g.successors[i])
      if (--waiting[s] == 0) ready.push_back(s);
  };
  auto group_end = [&](uint32_t i) {
    TimeNs latest = INT64_MIN;
    for (uint32_t k : g.node_groups[i]) latest = std::max(latest, group_max[k]);
    return SaturatingAdd(latest, f.transfer[i]);
  };
  auto complete_group = [&](uint32_t k) {
    for (uint32_t m : g.groups[k])
      if (--groups_left[m] == 0 && started[m]) finish(m, group_end(m));
  };
  size_t done = 0;
  for (;;) {
    while (!ready.empty()) {
      const uint32_t i = ready.back();
      ready.pop_back();
      if (started[i]) continue;  // forced out of a cycle, then released again
      TimeNs s = g.t0;
      bool any = false;
      for (uint32_t d : g.nodes[i].deps)
        if (d != kNone && ended[d]) s = any ? std::max(s, end[d]) : end[d], any = true;
      start[i] = SaturatingAdd(s, f.delay[i]);
      started[i] = 1;
      ++done;
      if (g.node_groups[i].empty()) {
        finish(i, SaturatingAdd(start[i], f.duration[i]));
        continue;
      }
      for (uint32_t k : g.node_groups[i]) {
        group_max[k] = std::max(group_max[k], start[i]);
        if (++group_started[k] == g.groups[k].size()) complete_group(k);
      }
      if (groups_left[i] == 0) finish(i, group_end(i));
    }
    if (done == n) break;
    // A cycle: the started member whose groups wait longest ends on the members started.
    uint32_t pick = kNone;
    for (uint32_t i = 0; i < n; ++i)
      if (started[i] && !ended[i] && (pick == kNone || start[i] < start[pick])) pick = i;
    ++*unresolved;
    if (pick == kNone) {
      // Nothing started waits: the cycle runs through activities not started. The one the
      // trace started first starts on the dependencies that ended.
      for (uint32_t i = 0; i < n; ++i)
        if (!started[i] && (pick == kNone || g.nodes[i].start < g.nodes[pick].start)) pick = i;
      waiting[pick] = 0;
      ready.push_back(pick);
      continue;
    }
    for (uint32_t k : g.node_groups[pick])
      if (group_started[k] < g.groups[k].size()) group_started[k] = static_cast<uint32_t>(g.groups[k].size()), complete_group(k);
    if (!ended[pick]) finish(pick, group_end(pick));
  }
  if (times) {
    times->resize(n);
    for (uint32_t i = 0; i < n; ++i) (*times)[i] = {start[i], std::max(start[i], end[i])};
  }
  return SaturatingSub(last, g.t0);
}

// The job's steps as graphs; the kinds' names.
std::vector<StepGraph> BuildSteps(const model::Trace& trace, const JobAnalysis& job, std::vector<std::string>* kinds,
                                  uint64_t* cross_edges) {
  std::map<int64_t, size_t> step_index;
  std::vector<StepGraph> steps;
  std::unordered_map<std::string, uint32_t> kind_of;
  // (rank, activity) -> (step, node)
  std::vector<std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>>> where(trace.ranks.size());
  for (uint32_t ri = 0; ri < trace.ranks.size(); ++ri) {
    const model::RankTrace& r = trace.ranks[ri];
    if (ri >= job.ranks.size()) break;
    const ActivityWindow& w = job.ranks[ri].window;
    if (w.step_of.size() != w.rows.size()) continue;
    for (size_t k = 0; k < w.rows.size(); ++k) {
      // A trace without profiler steps replays its whole window as one step (-1).
      if (w.step_of[k] < 0 && !r.steps.empty()) continue;
      const uint32_t a = w.rows[k];
      if (r.gpu.kind[a] == model::ActivityKind::kSync) continue;
      const int64_t number = w.step_of[k] >= 0 ? r.steps[w.step_of[k]].number : -1;
      auto [it, fresh] = step_index.try_emplace(number, steps.size());
      if (fresh) steps.push_back({}), steps.back().number = number;
      StepGraph& g = steps[it->second];
      const std::string name(r.strings.Get(r.gpu.name[a]));
      auto [kit, new_kind] = kind_of.try_emplace(name, static_cast<uint32_t>(kinds->size()));
      if (new_kind) kinds->push_back(name);
      Node node;
      node.rank = ri, node.kind = kit->second, node.row = a;
      node.start = r.gpu.start[a], node.end = std::max(r.gpu.end[a], r.gpu.start[a]);
      if (const uint32_t c = r.gpu.comm[a]; c != model::kNoIndex && r.comms.group[c] != model::kNoIndex)
        node.job_group = r.groups[r.comms.group[c]].job_group;
      where[ri][a] = {static_cast<uint32_t>(it->second), static_cast<uint32_t>(g.nodes.size())};
      g.nodes.push_back(node);
    }
  }
  for (StepGraph& g : steps) {
    g.node_groups.assign(g.nodes.size(), {});
    g.successors.assign(g.nodes.size(), {});
  }
  // Same-rank edges, in the window's order (by start): the stream's activity before, and
  // another stream's activity it waited for.
  for (uint32_t ri = 0; ri < trace.ranks.size() && ri < job.ranks.size(); ++ri) {
    const model::RankTrace& r = trace.ranks[ri];
    std::unordered_map<int64_t, std::pair<uint32_t, uint32_t>> last_on;  // stream -> (step, node)
    std::vector<std::pair<uint32_t, uint32_t>> order;                     // (step, node) by start
    for (uint32_t a : job.ranks[ri].window.rows) {
      auto it = where[ri].find(a);
      if (it == where[ri].end()) continue;
      const auto [s, i] = it->second;
      const int64_t key = (static_cast<int64_t>(r.gpu.device[a]) << 32) | static_cast<uint32_t>(r.gpu.stream[a]);
      auto prev = last_on.find(key);
      if (prev != last_on.end() && prev->second.first == s) steps[s].nodes[i].deps[0] = prev->second.second;
      last_on[key] = {s, i};
      order.push_back({s, i});
    }
    // Another stream's activity that ended just before this one started, later than its
    // own stream's: an event wait.
    std::map<uint32_t, std::vector<uint32_t>> per_step;
    for (const auto& [s, i] : order) per_step[s].push_back(i);
    for (auto& [s, nodes] : per_step) {
      StepGraph& g = steps[s];
      std::vector<uint32_t> by_end = nodes;
      std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return g.nodes[a].end < g.nodes[b].end; });
      for (uint32_t i : nodes) {
        Node& x = g.nodes[i];
        const TimeNs own = x.deps[0] == kNone ? INT64_MIN : g.nodes[x.deps[0]].end;
        if (own != INT64_MIN && x.start <= own + kSlack) continue;
        auto it = std::upper_bound(by_end.begin(), by_end.end(), x.start,
                                   [&](TimeNs t, uint32_t b) { return t < g.nodes[b].end; });
        for (int back = 0; it != by_end.begin() && back < 8; ++back) {
          const uint32_t y = *--it;
          const Node& other = g.nodes[y];
          // Within kCrossStream of its start; after a long wait (over kLongWait past its
          // stream), whatever ended last before it.
          const bool long_wait = own == INT64_MIN ? x.start - g.t0 > kLongWait : x.start - own > kLongWait;
          if ((!long_wait && other.end < x.start - kCrossStream) || other.end <= own) break;
          if (y == i || y == x.deps[0]) continue;
          x.deps[1] = y;
          ++*cross_edges;
          break;
        }
      }
    }
  }
  // Cross-rank groups: matched collectives and messages whose members all fall in one step.
  const model::MatchedOps& m = trace.matched;
  for (uint32_t k = 0; k < m.size(); ++k) {
    if (m.members(k) < 2) continue;
    std::vector<uint32_t> members;
    uint32_t step = kNone;
    bool whole = true;
    for (uint32_t j = m.first[k]; j < m.first[k + 1] && whole; ++j) {
      const model::RankTrace& r = trace.ranks[m.rank_index[j]];
      const uint32_t a = r.comms.activity[m.row[j]];
      auto it = a == model::kNoIndex ? where[m.rank_index[j]].end() : where[m.rank_index[j]].find(a);
      if (it == where[m.rank_index[j]].end() || (step != kNone && it->second.first != step)) whole = false;
      else step = it->second.first, members.push_back(it->second.second);
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (!whole || members.size() < 2) continue;
    StepGraph& g = steps[step];
    const uint32_t id = static_cast<uint32_t>(g.groups.size());
    for (uint32_t i : members) g.node_groups[i].push_back(id), g.nodes[i].grouped = true;
    g.groups.push_back(std::move(members));
  }
  // A rank's peers, whose counts and launch delays say what is typical for it when it is
  // fixed: every rank of the job; in a pipeline, the ranks of its stage (each stage runs and
  // launches its own pattern: the first the embedding, the last the loss). A stage of one
  // rank (no data parallelism) is its own peer (see the extra work below), and fixed, its
  // launch delays stay as measured (capping them at the other stages' median predicted a
  // pipeline's heavy steps 31% faster than its light steps ran; at its own median over
  // the steps, 22%).
  // Ranks outside the pipeline's stages are peers of each other.
  const Pipeline& pipe = job.cross_rank.pipeline;
  const std::vector<int> peer_class = StageOfRanks(trace, pipe, pipe.detected ? pipe.stages : 0);
  std::map<int, uint32_t> class_size;
  for (int c : peer_class) ++class_size[c];
  auto own_peer = [&](uint32_t ri) { return class_size[peer_class[ri]] < 2; };
  const std::vector<int64_t> summarized = job.step_choice.Summarized();
  auto replayed = [&](const StepGraph& g) {
    return summarized.empty() || g.number < 0 || std::binary_search(summarized.begin(), summarized.end(), g.number);
  };
  // Extra work, per step: a rank's activities of a kind beyond a typical count of that
  // kind (its last ones by start), the lower median of the counts of
  //  - every rank, those without the kind counting 0 (|extra|: what the ideal leaves out):
  //    kernels a slow rank adds (an extra computation, more layers) have no typical
  //    duration but none; over every rank, pipeline stages included, as the published
  //    method holds each op against the same op type on every worker: a stage with more
  //    layers than the others is a slowdown;
  //  - its peers, those without it counting 0 (|fix_extra|: what fixing the rank takes
  //    away); a rank that is its own peer, against the ranks that run the kind: the kinds
  //    only it runs (the last stage's loss) are its own work, which its light steps run
  //    too (against every rank, a fix of the last stage took them away: its heavy steps
  //    came out 11% faster than its light ones ran), while layers it runs more of than the
  //    stages beside it are extra, in a step heavier than usual or in every step.
  auto lower_median = [](std::vector<size_t> c) {
    std::nth_element(c.begin(), c.begin() + (c.size() - 1) / 2, c.end());
    return c[(c.size() - 1) / 2];  // of two ranks, the one without the extra work
  };
  for (StepGraph& g : steps) {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> occurrences;  // (kind, rank) -> nodes
    for (uint32_t i = 0; i < g.nodes.size(); ++i) occurrences[{g.nodes[i].kind, g.nodes[i].rank}].push_back(i);
    std::map<uint32_t, std::vector<size_t>> counts;                     // kind -> counts of the ranks that run it
    std::map<std::pair<uint32_t, int>, std::vector<size_t>> in_class;  // (kind, peer class) -> the same
    for (const auto& [key, nodes] : occurrences) {
      counts[key.first].push_back(nodes.size());
      in_class[{key.first, peer_class[key.second]}].push_back(nodes.size());
    }
    // The typical counts, once per kind and per (kind, peer class).
    std::map<uint32_t, std::pair<size_t, size_t>> of_kind;  // kind -> (over every rank, over the ranks that run it)
    for (const auto& [kind, c] : counts) {
      std::vector<size_t> all = c;
      all.resize(trace.ranks.size(), 0);
      of_kind[kind] = {lower_median(std::move(all)), lower_median(c)};
    }
    std::map<std::pair<uint32_t, int>, size_t> of_class;  // (kind, peer class) -> over the class
    for (const auto& [key, c] : in_class) {
      std::vector<size_t> peers = c;
      peers.resize(class_size[key.second], 0);
      of_class[key] = lower_median(std::move(peers));
    }
    for (auto& [key, nodes] : occurrences) {
      const auto [kind, rank] = key;
      std::sort(nodes.begin(), nodes.end(), [&](uint32_t x, uint32_t y) { return g.nodes[x].start < g.nodes[y].start; });
      const size_t typical = of_kind[kind].first;
      const size_t fix_typical = own_peer(rank) ? of_kind[kind].second : of_class[{kind, peer_class[rank]}];
      for (uint32_t k = 0; k < nodes.size(); ++k) {
        Node& x = g.nodes[nodes[k]];
        x.occurrence = k;
        x.extra = k >= typical;
        x.fix_extra = k >= fix_typical;
      }
    }
  }
  // Measured delays and transfers, successors, the step's start and time.
  for (StepGraph& g : steps) {
    g.t0 = INT64_MAX;
    TimeNs last = INT64_MIN;
    for (const Node& x : g.nodes) g.t0 = std::min(g.t0, x.start), last = std::max(last, x.end);
    g.measured = SaturatingSub(last, g.t0);
    std::vector<TimeNs> group_max(g.groups.size(), INT64_MIN);
    for (size_t k = 0; k < g.groups.size(); ++k)
      for (uint32_t i : g.groups[k]) group_max[k] = std::max(group_max[k], g.nodes[i].start);
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      Node& x = g.nodes[i];
      TimeNs ready = g.t0;
      bool any = false;
      for (uint32_t d : x.deps)
        if (d != kNone) ready = any ? std::max(ready, g.nodes[d].end) : g.nodes[d].end, any = true, g.successors[d].push_back(i);
      x.delay = SaturatingSub(x.start, ready);
      if (x.grouped) {
        TimeNs latest = INT64_MIN;
        for (uint32_t k : g.node_groups[i]) latest = std::max(latest, group_max[k]);
        x.transfer = SaturatingSub(x.end, latest);
        if (x.transfer <= kNegativeTransfer) x.transfer = 0;
      }
    }
  }
  // The typical launch delay of each (kind, occurrence): the median over the rank's peers
  // in the step. A rank that is its own peer keeps its own delays (see peer_class).
  for (StepGraph& g : steps) {
    std::map<std::tuple<uint32_t, uint32_t, int>, std::vector<TimeNs>> delays;  // (kind, occurrence, peer class)
    for (const Node& x : g.nodes)
      if (!own_peer(x.rank)) delays[{x.kind, x.occurrence, peer_class[x.rank]}].push_back(x.delay);
    for (auto& [key, v] : delays) std::nth_element(v.begin(), v.begin() + (v.size() - 1) / 2, v.end());
    for (Node& x : g.nodes) {
      if (own_peer(x.rank)) {
        x.typical_delay = x.delay;
        continue;
      }
      const auto& v = delays[{x.kind, x.occurrence, peer_class[x.rank]}];
      x.typical_delay = v.empty() ? x.delay : v[(v.size() - 1) / 2];
    }
  }
  std::sort(steps.begin(), steps.end(), [](const StepGraph& a, const StepGraph& b) { return a.number < b.number; });
  // The steps the job's summary covers (an outlier step, a cuFFT plan's first call, stays
  // in the window for the hang finding but not in a step statistic: nor here).
  std::erase_if(steps, [&](const StepGraph& g) { return !replayed(g); });
  return steps;
}

}  // namespace

double MeanStep(const std::vector<TimeNs>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (TimeNs t : v) s += static_cast<double>(t);
  return s / static_cast<double>(v.size());
}

WhatIfAnalysis WhatIf(const model::Trace& trace, const JobAnalysis& job, const WhatIfOptions& options) {
  WhatIfAnalysis out;
  std::vector<std::string> kinds;
  std::vector<StepGraph> steps = BuildSteps(trace, job, &kinds, &out.cross_stream_edges);
  if (steps.empty()) {
    out.why_not = "no GPU activities to replay (a recording without kernels, or none inside the profiler steps)";
    return out;
  }
  // The ideal per kind: compute and memory at the mean duration, communication at the
  // median transfer.
  std::vector<double> sum(kinds.size(), 0);
  std::vector<uint64_t> count(kinds.size(), 0);
  std::vector<std::vector<TimeNs>> transfers(kinds.size());
  std::vector<double> measured_time(kinds.size(), 0);
  for (const StepGraph& g : steps)
    for (const Node& x : g.nodes) {
      measured_time[x.kind] += static_cast<double>(SaturatingSub(x.end, x.start));
      if (x.grouped) transfers[x.kind].push_back(x.transfer);
      else sum[x.kind] += static_cast<double>(SaturatingSub(x.end, x.start)), ++count[x.kind];
    }
  std::vector<TimeNs> ideal_duration(kinds.size(), 0), ideal_transfer(kinds.size(), 0);
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (count[k]) ideal_duration[k] = static_cast<TimeNs>(std::llround(sum[k] / static_cast<double>(count[k])));
    auto& t = transfers[k];
    if (!t.empty()) {
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      ideal_transfer[k] = t[t.size() / 2];
    }
  }
  // Frames per step: measured, no-delay, ideal; a part measured in the ideal, or ideal in
  // the no-delay frame.
  auto measured_frame = [](const StepGraph& g) {
    Frame f;
    for (const Node& x : g.nodes) {
      f.duration.push_back(SaturatingSub(x.end, x.start));
      f.transfer.push_back(x.transfer);
      f.delay.push_back(x.delay);
    }
    return f;
  };
  auto ideal_frame = [&](const StepGraph& g) {
    Frame f;
    for (const Node& x : g.nodes) {
      f.duration.push_back(x.extra ? 0 : ideal_duration[x.kind]);
      f.transfer.push_back(x.extra ? 0 : ideal_transfer[x.kind]);
      f.delay.push_back(0);
    }
    return f;
  };
  uint64_t unresolved = 0;
  for (StepGraph& g : steps) {
    out.steps.push_back(g.number);
    out.measured.push_back(g.measured);
    Frame f = measured_frame(g);
    out.replayed.push_back(Replay(g, f, &unresolved));
    std::fill(f.delay.begin(), f.delay.end(), 0);
    out.no_delay.push_back(Replay(g, f, &unresolved));
    std::vector<std::pair<TimeNs, TimeNs>> times;
    out.ideal.push_back(Replay(g, ideal_frame(g), &unresolved, options.timeline ? &times : nullptr));
    for (size_t i = 0; i < times.size(); ++i)
      out.ideal_timeline.push_back({g.nodes[i].rank, g.nodes[i].row, times[i].first, times[i].second, g.number});
    out.nodes += g.nodes.size();
    out.groups += g.groups.size();
    const double m = static_cast<double>(g.measured);
    if (m > 0) out.replay_error = std::max(out.replay_error, std::abs(static_cast<double>(out.replayed.back()) - m) / m);
    out.step_slowdown.push_back(out.ideal.back() > 0 ? static_cast<double>(out.no_delay.back()) / static_cast<double>(out.ideal.back()) : 0);
  }
  const double ideal = MeanStep(out.ideal);
  out.slowdown = ideal > 0 ? MeanStep(out.no_delay) / ideal : 0;
  out.launch_slowdown = MeanStep(out.no_delay) > 0 ? MeanStep(out.measured) / MeanStep(out.no_delay) : 0;

  // Parts: which nodes belong to each.
  using Pick = std::function<bool(const Node&)>;
  const Pipeline& pipe = job.cross_rank.pipeline;
  const std::vector<int> stage_of = StageOfRanks(trace, pipe, -1);
  auto pick_of = [&](const WhatIfPart& p) -> Pick {
    if (p.kind == "rank") {
      const int r = std::atoi(p.value.c_str());
      return [&trace, r](const Node& x) { return trace.ranks[x.rank].rank == r; };
    }
    if (p.kind == "stage") {
      const int s = std::atoi(p.value.c_str());
      return [&stage_of, s](const Node& x) { return stage_of[x.rank] == s; };
    }
    if (p.kind == "op") {
      const std::string prefix = p.value;
      return [&kinds, prefix](const Node& x) { return kinds[x.kind].starts_with(prefix); };
    }
    const std::string name = p.value;
    return [&trace, name](const Node& x) {
      return x.job_group != kNone && (trace.groups[x.job_group].name == name || trace.groups[x.job_group].description == name);
    };
  };
  // The ideal with |pick|'s nodes measured: T_g / T_id, mean and per step.
  auto share = [&](const std::string& label, const WhatIfPart& part, const Pick& pick) {
    WhatIfShare s{label, part, 0, {}};
    std::vector<TimeNs> times;
    for (size_t i = 0; i < steps.size(); ++i) {
      const StepGraph& g = steps[i];
      Frame f = ideal_frame(g);
      for (size_t n = 0; n < g.nodes.size(); ++n)
        if (pick(g.nodes[n])) f.duration[n] = SaturatingSub(g.nodes[n].end, g.nodes[n].start), f.transfer[n] = g.nodes[n].transfer;
      times.push_back(Replay(g, f, &unresolved));
      s.per_step.push_back(out.ideal[i] > 0 ? static_cast<double>(times.back()) / static_cast<double>(out.ideal[i]) : 0);
    }
    s.slowdown = ideal > 0 ? MeanStep(times) / ideal : 0;
    return s;
  };
  auto by_slowdown = [](std::vector<WhatIfShare>* v) {
    std::stable_sort(v->begin(), v->end(), [](const WhatIfShare& a, const WhatIfShare& b) { return a.slowdown > b.slowdown; });
  };
  std::vector<uint32_t> candidates(trace.ranks.size());
  std::iota(candidates.begin(), candidates.end(), 0u);
  if (options.rank_candidates > 0 && options.rank_candidates < candidates.size()) {
    // A rank's excess over the ideal: its activities' time beyond their kinds' ideal.
    std::vector<double> excess(trace.ranks.size(), 0);
    for (const StepGraph& g : steps)
      for (const Node& x : g.nodes)
        if (!x.grouped) excess[x.rank] += static_cast<double>(SaturatingSub(x.end, x.start)) - (x.extra ? 0.0 : ideal_duration[x.kind]);
    std::partial_sort(candidates.begin(), candidates.begin() + options.rank_candidates, candidates.end(),
                      [&](uint32_t a, uint32_t b) { return excess[a] > excess[b]; });
    candidates.resize(options.rank_candidates);
  }
  for (uint32_t ri : candidates)
    out.by_rank.push_back(share(fmt::format("rank {}", trace.ranks[ri].rank), {"rank", std::to_string(trace.ranks[ri].rank)},
                                pick_of({"rank", std::to_string(trace.ranks[ri].rank)})));
  if (pipe.detected)
    for (int s = 0; s < pipe.stages; ++s)
      out.by_stage.push_back(share(fmt::format("stage {}", s), {"stage", std::to_string(s)}, pick_of({"stage", std::to_string(s)})));
  std::vector<uint32_t> top(kinds.size());
  std::iota(top.begin(), top.end(), 0u);
  std::sort(top.begin(), top.end(), [&](uint32_t a, uint32_t b) { return measured_time[a] > measured_time[b]; });
  top.resize(std::min(top.size(), options.top_ops));
  for (uint32_t k : top)
    out.by_op.push_back(share("op " + kinds[k], {"op", kinds[k]}, [k](const Node& x) { return x.kind == k; }));
  for (uint32_t gi = 0; options.attribute_groups && gi < trace.groups.size(); ++gi) {
    const model::JobGroup& jg = trace.groups[gi];
    out.by_group.push_back(share(fmt::format("group {}{}", jg.name, jg.description.empty() ? "" : ":" + jg.description),
                                 {"group", jg.name}, [gi](const Node& x) { return x.job_group == gi; }));
  }
  for (auto* v : {&out.by_rank, &out.by_stage, &out.by_op, &out.by_group}) by_slowdown(v);

  std::vector<WhatIfPart> fixes = options.fixes;
  for (size_t i = 0; i < options.fix_top && i < out.by_rank.size(); ++i)
    if (out.by_rank[i].slowdown >= kAttributed) fixes.push_back(out.by_rank[i].part);
  for (const auto* v : {&out.by_stage, &out.by_op})
    if (options.fix_top && !v->empty() && v->front().slowdown >= kAttributed) fixes.push_back(v->front().part);
  // What-ifs: a part at its ideal (its extra work left out: at the typical speed a rank
  // does what its peers do; its launch delays no longer than its peers' median for the
  // same activity, a rank without peers keeping its own), the rest as measured; and the
  // same without launch delays.
  // A prediction: each step's measured frame edited by |edit|, replayed with its launch
  // delays and without.
  auto predict = [&](WhatIfFix fix, const std::function<void(const StepGraph&, Frame*)>& edit) {
    for (const StepGraph& g : steps) {
      Frame f = measured_frame(g);
      edit(g, &f);
      fix.step_time.push_back(Replay(g, f, &unresolved));
      std::fill(f.delay.begin(), f.delay.end(), 0);
      fix.no_delay.push_back(Replay(g, f, &unresolved));
    }
    fix.mean = static_cast<TimeNs>(MeanStep(fix.step_time));
    const double measured = MeanStep(out.replayed);
    fix.gain = measured > 0 ? 1.0 - static_cast<double>(fix.mean) / measured : 0;
    out.fixes.push_back(std::move(fix));
  };
  for (const WhatIfPart& part : fixes) {
    const Pick pick = pick_of(part);
    predict({part, {}, {}}, [&](const StepGraph& g, Frame* f) {
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        const Node& x = g.nodes[n];
        if (!pick(x)) continue;
        f->duration[n] = x.fix_extra ? 0 : ideal_duration[x.kind];
        f->transfer[n] = x.fix_extra ? 0 : ideal_transfer[x.kind];
        f->delay[n] = x.fix_extra ? 0 : std::min(x.delay, x.typical_delay);
      }
    });
  }
  // The network at the benchmark's speed: each communication activity's transfer what the
  // curve of its op and group size gives for its bytes (busbw over the op's factor: the
  // algorithm bandwidth), the rest as measured.
  if (!options.network.empty()) {
    auto bench_transfer = [&](const Node& x) -> TimeNs {
      const model::RankTrace& r = trace.ranks[x.rank];
      const uint32_t c = x.row == kNone ? kNone : r.gpu.comm[x.row];
      if (c == kNone || c >= r.comms.size() || r.comms.bytes[c] <= 0 || (r.comms.flags[c] & model::kCommBatched)) return -1;
      const int n = GroupSizeOf(r, r.comms.group[c]);
      const BenchCurve* curve = CurveFor(options.network, r.comms.op[c], n);
      if (!curve) return -1;
      const double busbw = BusBwAt(*curve, static_cast<double>(r.comms.bytes[c]));
      const double factor = model::BusBwFactor(r.comms.op[c], n);
      if (!(busbw > 0) || !(factor > 0)) return -1;
      return static_cast<TimeNs>(std::llround(static_cast<double>(r.comms.bytes[c]) / (busbw / factor)));  // GB/s = B/ns
    };
    uint64_t priced = 0, unpriced = 0;
    predict({{"network", options.network_label}, {}, {}}, [&](const StepGraph& g, Frame* f) {
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (!g.nodes[n].grouped) continue;
        const TimeNs t = bench_transfer(g.nodes[n]);
        if (t < 0) {
          ++unpriced;
          continue;
        }
        ++priced;
        f->transfer[n] = t;
      }
    });
    out.fixes.back().priced = priced, out.fixes.back().unpriced = unpriced;
  }
  out.unresolved = unresolved;
  out.done = true;
  return out;
}

model::Trace IdealTimeline(const model::Trace& trace, const WhatIfAnalysis& w) {
  model::Trace out;
  out.world_size = trace.world_size;
  std::vector<std::vector<const WhatIfAnalysis::Placed*>> placed(trace.ranks.size());
  for (const auto& p : w.ideal_timeline) placed[p.rank].push_back(&p);
  const std::set<int64_t> replayed(w.steps.begin(), w.steps.end());
  for (size_t ri = 0; ri < trace.ranks.size(); ++ri) {
    const model::RankTrace& r = trace.ranks[ri];
    model::RankTrace x;
    x.rank = r.rank, x.world_size = r.world_size, x.format = r.format, x.backend = r.backend;
    x.hostname = "ideal replay";
    x.devices = r.devices;
    std::stable_sort(placed[ri].begin(), placed[ri].end(), [](auto* a, auto* b) { return a->start < b->start; });
    for (const auto* p : placed[ri]) {
      const uint32_t row = p->row;
      const uint32_t i = x.gpu.Append(p->start, p->end, x.strings.Intern(r.strings.Get(r.gpu.name[row])), r.gpu.device[row],
                                      r.gpu.stream[row], r.gpu.correlation[row], r.gpu.kind[row]);
      x.gpu.cls[i] = r.gpu.cls[row], x.gpu.copy[i] = r.gpu.copy[row], x.gpu.bytes[i] = r.gpu.bytes[row];
    }
    // Each replayed step: from its measured start to the last of its own activities'
    // ideal ends (ideal times may run past the measured step's end, and its activities
    // are known by the step they were replayed in, not by where they now fall).
    for (const model::ProfilerStep& st : r.steps) {
      if (!replayed.count(st.number)) continue;
      TimeNs end = st.start;
      for (const auto* p : placed[ri])
        if (p->step == st.number) end = std::max(end, p->end);
      x.steps.push_back({st.number, st.start, end});
      // Drawn as a range on a thread of its own ("steps"), as the profiler's own are.
      x.annotations.Append(st.start, end, x.strings.Intern(fmt::format("ProfilerStep#{}", st.number)), x.strings.Intern(""), 0,
                           1, -1);
    }
    if (!x.steps.empty()) x.threads.push_back({0, 1, "profiler steps (ideal)"});
    out.ranks.push_back(std::move(x));
  }
  return out;
}

ReplayVerdict ReplayVerdictOf(const model::Trace& trace, const JobAnalysis& job) {
  ReplayVerdict v;
  WhatIfOptions options;
  options.fix_top = 2;
  options.top_ops = 6;
  // Every rank of a small job (the heatmap's rows), the likeliest 8 of a larger one.
  options.rank_candidates = trace.ranks.size() <= kReplayHeatRanks ? 0 : 8;
  options.attribute_groups = trace.groups.size() <= 16;  // a replay each
  const WhatIfAnalysis w = WhatIf(trace, job, options);
  v.done = w.done, v.why_not = w.why_not;
  if (!w.done) return v;
  v.slowdown = w.slowdown, v.replay_error = w.replay_error;
  v.step = static_cast<TimeNs>(MeanStep(w.replayed));
  v.no_delay_step = static_cast<TimeNs>(MeanStep(w.no_delay));
  auto s_of = [&](const WhatIfPart& p) {
    for (const auto* list : {&w.by_rank, &w.by_stage, &w.by_op})
      for (const WhatIfShare& s : *list)
        if (s.part.kind == p.kind && s.part.value == p.value) return s.slowdown;
    return 0.0;
  };
  // Judged without launch delays (the GPUs' own time, as S is): a delay the model does
  // not explain stays fixed in the measured frame, and can hide any gain.
  std::vector<ReplayVerdict::Part>& parts = v.parts;
  for (const WhatIfFix& f : w.fixes) {
    const TimeNs step = static_cast<TimeNs>(MeanStep(f.no_delay));
    parts.push_back({f.part.kind, f.part.value, s_of(f.part), step,
                     v.no_delay_step > 0 ? 1.0 - static_cast<double>(step) / static_cast<double>(v.no_delay_step) : 0});
  }
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.gain > b.gain; });
  // The smallest part that does it: a rank whose fix gains (nearly) all its stage's fix
  // does comes before its stage (ByteDance's AR job: the slowed worker, rank 0, gains 52%,
  // as all of stage 0 does; the headline names the worker). A stage of one rank is that
  // rank: one part, named as the stage, at the better of the two places.
  const Pipeline& pipe = job.cross_rank.pipeline;
  auto ranks_of_stage = [&](int stage) {
    std::vector<int> ranks;
    for (const PipelineStage& st : pipe.per_stage)
      if (st.stage == stage) ranks.push_back(st.rank);
    return ranks;
  };
  for (size_t i = 0; pipe.detected && i < parts.size(); ++i) {
    if (parts[i].kind != "stage") continue;
    const std::vector<int> members = ranks_of_stage(std::atoi(parts[i].value.c_str()));
    for (size_t j = 0; j < parts.size(); ++j) {
      if (parts[j].kind != "rank" ||
          std::find(members.begin(), members.end(), std::atoi(parts[j].value.c_str())) == members.end())
        continue;
      if (members.size() == 1) {
        size_t rank_at = j;
        if (j < i) std::swap(parts[i], parts[j]), rank_at = i, i = j;
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(rank_at));
      } else if (j > i && parts[j].gain >= 0.95 * parts[i].gain) {
        std::rotate(parts.begin() + i, parts.begin() + j, parts.begin() + j + 1);
        ++i;  // the stage moved one place on
      }
      break;
    }
  }
  v.steps = w.steps;
  v.step_slowdown = w.step_slowdown;
  for (auto [from, to] : {std::pair{&w.by_rank, &v.by_rank}, std::pair{&w.by_stage, &v.by_stage},
                          std::pair{&w.by_op, &v.by_op}, std::pair{&w.by_group, &v.by_group}})
    for (const WhatIfShare& x : *from) to->push_back({x.label, x.slowdown});
  std::vector<const WhatIfShare*> ranks;
  for (const WhatIfShare& s : w.by_rank) ranks.push_back(&s);
  std::sort(ranks.begin(), ranks.end(), [](const WhatIfShare* a, const WhatIfShare* b) {
    return std::atoi(a->part.value.c_str()) < std::atoi(b->part.value.c_str());
  });
  for (const WhatIfShare* s : ranks) v.heat.push_back({s->label, s->per_step});
  std::vector<const WhatIfShare*> stages;
  for (const WhatIfShare& s : w.by_stage) stages.push_back(&s);
  std::sort(stages.begin(), stages.end(), [](const WhatIfShare* a, const WhatIfShare* b) {
    return std::atoi(a->part.value.c_str()) < std::atoi(b->part.value.c_str());
  });
  for (const WhatIfShare* s : stages) v.heat.push_back({s->label, s->per_step});
  return v;
}

}  // namespace commlens::analysis
