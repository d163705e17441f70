#include "analysis/parallel_roles.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

#include "analysis/collectives.h"
#include "common/saturating.h"
#include "model/collective.h"

namespace commlens::analysis {

namespace {

using model::CommOp;

// The role a word of a description names, kUnknown for none.
ParallelRole RoleOfWord(const std::string& w) {
  static const std::map<std::string, ParallelRole, std::less<>> kWords = {
      {"tp", ParallelRole::kTensor},      {"tensor", ParallelRole::kTensor},   {"dp", ParallelRole::kData},
      {"data", ParallelRole::kData},      {"fsdp", ParallelRole::kData},       {"ddp", ParallelRole::kData},
      {"hsdp", ParallelRole::kData},      {"pp", ParallelRole::kPipeline},     {"pipeline", ParallelRole::kPipeline},
      {"pipe", ParallelRole::kPipeline},  {"ep", ParallelRole::kExpert},       {"expert", ParallelRole::kExpert},
      {"moe", ParallelRole::kExpert},     {"cp", ParallelRole::kContext},      {"context", ParallelRole::kContext}};
  auto it = kWords.find(w);
  return it == kWords.end() ? ParallelRole::kUnknown : it->second;
}

// Rule 1: "TENSOR_MODEL_PARALLEL_GROUP", "mesh_tp", "dp_shard", "TENSOR_AND_DATA_PARALLEL_GROUP".
bool RoleFromDescription(const std::string& description, GroupRole* out) {
  std::vector<std::string> words;
  std::string w;
  for (char c : description + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  std::vector<ParallelRole> named;
  for (const std::string& word : words)
    if (ParallelRole r = RoleOfWord(word); r != ParallelRole::kUnknown && std::find(named.begin(), named.end(), r) == named.end())
      named.push_back(r);
  const bool joined = std::find(words.begin(), words.end(), "and") != words.end();
  out->rule = fmt::format("its description '{}'", description);
  if (named.empty()) {
    // A description that names no parallelism (Megatron's EMBEDDING_GROUP, a user's own
    // group) is not guessed from the structure; PyTorch's default group's is.
    if (description.empty() || description == "default_pg") return false;
    out->rule += ", which names no parallelism";
    return true;
  }
  if (named.size() > 1 && joined) {
    out->role = ParallelRole::kMixed;
  } else if (named.size() > 1 && named.front() == ParallelRole::kExpert) {
    // EXPERT_DATA_PARALLEL_GROUP, EXPERT_TENSOR_PARALLEL_GROUP: the experts' own data or
    // tensor parallelism; what the group does is the second word's.
    out->role = named[1];
  } else {
    out->role = named.front();
  }
  return true;
}

// What a group's operations are, over every rank.
struct OpMix {
  uint64_t all = 0;
  uint64_t p2p = 0;
  uint64_t all_to_all = 0;
  uint64_t reductions = 0;  // all-reduce, reduce-scatter, all-gather, reduce
  int64_t largest_reduction = 0;  // bytes; a barrier is an all-reduce of 4 bytes
  // Send/recv ops in batches (one kernel) that send to and receive from every other
  // member of the group: an all-to-all made of send/recv (PyTorch's all_to_all under
  // Nsight), or with two members also a pipeline's paired messages.
  uint64_t p2p_exchanging_with_all = 0;
  bool wraps = false;  // send/recv between the first and the last member (3 or more)
};

// Adds the batches of rank |r|'s p2p ops to |mix| (by job group): ops that share a kernel
// (or, without one, the same times) are a batch.
void CountExchanges(const model::RankTrace& r, std::vector<OpMix>* mix) {
  const model::CommOps& c = r.comms;
  struct Batch {
    std::set<int32_t> to, from;
    uint64_t ops = 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, model::TimeNs, model::TimeNs>, Batch> batches;  // (group, kernel, start, end)
  for (size_t i = 0; i < c.size(); ++i) {
    if (!model::IsPointToPoint(c.op[i]) || c.group[i] == model::kNoIndex || c.group[i] >= r.groups.size()) continue;
    const bool kernel = c.activity[i] != model::kNoIndex;
    Batch& b = batches[{c.group[i], c.activity[i], kernel ? 0 : c.start[i], kernel ? 0 : c.end[i]}];
    ++b.ops;
    if (c.peer[i] < 0) continue;  // no peer known (an Nsight export without payloads)
    (c.op[i] == CommOp::kRecv ? b.from : b.to).insert(c.peer[i]);
    if (c.op[i] == CommOp::kSendRecv) b.from.insert(c.peer[i]);
  }
  for (auto& [key, b] : batches) {
    const model::ProcessGroup& g = r.groups[std::get<0>(key)];
    if (g.job_group >= mix->size() || g.size < 2) continue;
    // Between the group's first and last member: a ring's closing edge, or an interleaved
    // pipeline's step from the last stage to the next chunk on the first.
    if (g.size >= 3 && g.self >= 0 && (g.self == 0 || g.self == g.size - 1) &&
        (b.to.count(g.size - 1 - g.self) || b.from.count(g.size - 1 - g.self)))
      (*mix)[g.job_group].wraps = true;
    b.to.erase(g.self);  // an all-to-all's share for itself, where the trace has it
    b.from.erase(g.self);
    const size_t others = static_cast<size_t>(g.size - 1);
    if (b.to.size() >= others && b.from.size() >= others) (*mix)[g.job_group].p2p_exchanging_with_all += b.ops;
  }
}

std::string Pct(uint64_t part, uint64_t whole) {
  return fmt::format("{:.0f}%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
}

void NameGroups(const model::Trace& trace, std::vector<GroupRole>* roles) {
  std::vector<OpMix> mix(trace.groups.size());
  for (const model::RankTrace& r : trace.ranks) {
    const model::CommOps& c = r.comms;
    for (size_t i = 0; i < c.size(); ++i) {
      const uint32_t k = c.group[i];
      if (k == model::kNoIndex || k >= r.groups.size()) continue;
      const uint32_t j = r.groups[k].job_group;
      if (j >= mix.size()) continue;
      OpMix& m = mix[j];
      ++m.all;
      const CommOp op = c.op[i];
      if (model::IsPointToPoint(op)) ++m.p2p;
      if (op == CommOp::kAllToAll) ++m.all_to_all;
      if (op == CommOp::kAllReduce || op == CommOp::kReduceScatter || op == CommOp::kAllGather || op == CommOp::kReduce) {
        ++m.reductions;
        m.largest_reduction = std::max(m.largest_reduction, c.bytes[i]);
      }
    }
    CountExchanges(r, &mix);
  }
  int world = trace.world_size;
  if (world <= 0) world = static_cast<int>(trace.ranks.size());

  // Rules 1 and 2; what is left for rule 3.
  std::vector<uint32_t> left;
  for (uint32_t j = 0; j < trace.groups.size(); ++j) {
    const model::JobGroup& g = trace.groups[j];
    GroupRole& out = (*roles)[j];
    out.job_group = j;
    out.group = g.name;
    out.description = g.description;
    out.size = g.size;
    if (RoleFromDescription(g.description, &out)) continue;
    const OpMix& m = mix[j];
    if (m.all == 0) {
      out.rule = "no operations in the traces";
    } else if (2 * m.p2p >= m.all && 2 * m.p2p_exchanging_with_all >= m.p2p && g.size >= 3) {
      out.role = ParallelRole::kExpert;
      out.rule = fmt::format("{} of its operations are send/recv in batches exchanging with every member "
                             "(an all-to-all made of send/recv)", Pct(m.p2p, m.all));
    } else if (2 * m.p2p >= m.all && 2 * m.p2p_exchanging_with_all >= m.p2p) {
      out.rule = "send/recv both ways in one batch with the only other member: a two-stage pipeline's paired "
                 "messages or a two-way all-to-all (a description would tell)";
    } else if (2 * m.p2p >= m.all) {
      out.role = ParallelRole::kPipeline;
      out.rule = fmt::format("{} of its operations are send/recv (between pipeline stages)", Pct(m.p2p, m.all));
      if (m.wraps)
        out.rule += "; the last member sends to the first: an interleaved pipeline, or a context-parallel ring "
                    "(a description would tell)";
    } else if (2 * m.all_to_all >= m.all) {
      out.role = ParallelRole::kExpert;
      out.rule = fmt::format("{} of its operations are all-to-all (expert dispatch and combine)", Pct(m.all_to_all, m.all));
    } else if (g.size <= 1) {
      out.rule = "one member";
    } else if (m.reductions > 0 && m.largest_reduction >= 0 && m.largest_reduction < kSmallMessageBytes) {
      out.rule = fmt::format("only small reductions (at most {} bytes: barriers, scalars)", m.largest_reduction);
    } else if (g.size >= world) {
      if (m.reductions > 0) {
        out.role = ParallelRole::kData;
        out.rule = "every rank, carrying reductions (gradients, as DDP and FSDP reduce them; tensor "
                   "parallelism over every rank would look the same)";
      } else {
        out.rule = "every rank, no reductions (barriers, broadcasts)";
      }
    } else if (g.ranks.empty()) {
      out.rule = "its members are unknown";
    } else if (m.reductions == 0) {
      out.rule = "no reductions";
    } else {
      left.push_back(j);
    }
  }

  // Rule 3: the dimensions of the mesh that carry reductions. A dimension is the groups
  // of one shape (their ranks less their lowest: {0,1} and {2,3} are one shape, {0,2} and
  // {1,3} another), which must not share a rank and together hold every rank.
  struct Dimension {
    std::vector<uint32_t> groups;
    std::set<int> members;
    bool disjoint = true;
    bool consecutive = true;
  };
  std::map<std::vector<int>, Dimension> by_shape;
  for (uint32_t j : left) {
    std::vector<int> ranks = trace.groups[j].ranks;
    std::sort(ranks.begin(), ranks.end());
    std::vector<int> shape;
    for (int r : ranks) shape.push_back(r - ranks.front());
    Dimension& d = by_shape[shape];
    d.groups.push_back(j);
    for (int r : ranks) d.disjoint = d.members.insert(r).second && d.disjoint;
    d.consecutive = shape.back() == static_cast<int>(shape.size()) - 1;  // 0, 1, ..., n-1 (ranks are distinct)
  }
  std::vector<const Dimension*> dims;
  for (const auto& [shape, d] : by_shape) {
    if (d.disjoint && static_cast<int>(d.members.size()) == world) {
      dims.push_back(&d);
    } else {
      for (uint32_t j : d.groups)
        (*roles)[j].rule = "groups of its shape do not split the ranks into a dimension of a mesh";
    }
  }
  auto set = [&](const Dimension& d, ParallelRole role, const std::string& rule) {
    for (uint32_t j : d.groups) (*roles)[j].role = role, (*roles)[j].rule = rule;
  };
  if (dims.size() == 1) {
    set(*dims[0], ParallelRole::kData,
        "the only dimension of the mesh carrying reductions (tensor parallelism with no data parallelism "
        "would look the same)");
  } else if (dims.size() == 2 && dims[0]->consecutive != dims[1]->consecutive) {
    const Dimension& inner = dims[0]->consecutive ? *dims[0] : *dims[1];
    const Dimension& outer = dims[0]->consecutive ? *dims[1] : *dims[0];
    set(inner, ParallelRole::kTensor, "consecutive ranks: the mesh's innermost dimension, where Megatron and torchtitan put TP");
    set(outer, ParallelRole::kData, "strided ranks beside a tensor-parallel dimension");
  } else {
    for (const Dimension* d : dims)
      set(*d, ParallelRole::kUnknown, fmt::format("{} dimensions of the mesh carry reductions; no rule tells them apart", dims.size()));
  }
}

}  // namespace

std::string_view RoleName(ParallelRole role) {
  switch (role) {
    case ParallelRole::kTensor: return "tensor";
    case ParallelRole::kData: return "data";
    case ParallelRole::kPipeline: return "pipeline";
    case ParallelRole::kExpert: return "expert";
    case ParallelRole::kContext: return "context";
    case ParallelRole::kMixed: return "mixed";
    case ParallelRole::kUnknown:
    case ParallelRole::kCount: break;
  }
  return "unknown";
}

std::string_view RoleShort(ParallelRole role) {
  switch (role) {
    case ParallelRole::kTensor: return "TP";
    case ParallelRole::kData: return "DP";
    case ParallelRole::kPipeline: return "PP";
    case ParallelRole::kExpert: return "EP";
    case ParallelRole::kContext: return "CP";
    case ParallelRole::kMixed: return "mixed";
    case ParallelRole::kUnknown:
    case ParallelRole::kCount: break;
  }
  return "other";
}

std::vector<ParallelRole> ParallelRoles::Present() const {
  std::vector<ParallelRole> out;
  for (ParallelRole r : {ParallelRole::kTensor, ParallelRole::kData, ParallelRole::kPipeline, ParallelRole::kExpert,
                         ParallelRole::kContext, ParallelRole::kMixed, ParallelRole::kUnknown}) {
    const size_t i = static_cast<size_t>(r);
    bool seen = summary.comm[i] > 0;
    for (const RoleTimes& s : steps) seen = seen || s.comm[i] > 0;
    for (const GroupRole& g : groups) seen = seen || (g.role == r && r != ParallelRole::kUnknown);
    if (seen) out.push_back(r);
  }
  return out;
}

ParallelRoles FindParallelRoles(const model::Trace& trace, const std::vector<const std::vector<GroupComm>*>& group_comm,
                                const std::vector<JobStepBreakdown>& steps, const std::vector<int64_t>& summarized,
                                model::TimeNs window_span) {
  ParallelRoles out;
  out.groups.resize(trace.groups.size());
  NameGroups(trace, &out.groups);

  std::map<int64_t, RoleTimes> by_step;  // sums over ranks until divided
  for (size_t r = 0; r < group_comm.size() && r < trace.ranks.size(); ++r) {
    const model::RankTrace& rank = trace.ranks[r];
    for (const GroupComm& e : *group_comm[r]) {
      out.has_kernels = true;
      ParallelRole role = ParallelRole::kUnknown;
      if (e.group >= 0 && static_cast<size_t>(e.group) < rank.groups.size())
        if (const uint32_t j = rank.groups[e.group].job_group; j < out.groups.size()) role = out.groups[j].role;
      RoleTimes& t = by_step[e.step];
      t.step = e.step;
      t.comm[static_cast<size_t>(role)] = SaturatingAdd(t.comm[static_cast<size_t>(role)], e.comm);
      t.exposed[static_cast<size_t>(role)] = SaturatingAdd(t.exposed[static_cast<size_t>(role)], e.exposed);
    }
  }
  auto mean = [](RoleTimes t, int ranks, model::TimeNs span) {
    t.ranks = ranks;
    t.span = span;
    for (size_t i = 0; i < kRoleCount; ++i) {
      t.comm[i] = ranks > 0 ? t.comm[i] / ranks : 0;
      t.exposed[i] = ranks > 0 ? t.exposed[i] / ranks : 0;
    }
    return t;
  };
  for (const JobStepBreakdown& s : steps) {
    RoleTimes t;
    t.step = s.number;
    if (auto it = by_step.find(s.number); it != by_step.end()) t = it->second;
    out.steps.push_back(mean(t, s.ranks, s.mean.span));
  }
  // The summary: the mean of the summarized steps' means, else the window's.
  std::vector<const RoleTimes*> parts;
  for (const RoleTimes& t : out.steps)
    if (std::find(summarized.begin(), summarized.end(), t.step) != summarized.end()) parts.push_back(&t);
  if (!parts.empty()) {
    RoleTimes sum;
    model::TimeNs span = 0;
    // Saturating: a damaged input's times may sum past int64 (found by summary_fuzzer).
    for (const RoleTimes* p : parts) {
      span = SaturatingAdd(span, p->span);
      for (size_t i = 0; i < kRoleCount; ++i)
        sum.comm[i] = SaturatingAdd(sum.comm[i], p->comm[i]), sum.exposed[i] = SaturatingAdd(sum.exposed[i], p->exposed[i]);
    }
    const int n = static_cast<int>(parts.size());
    out.summary = mean(sum, n, span / n);
    out.summary.ranks = parts.front()->ranks;
    out.summary.step = kWholeWindow;
  } else {
    RoleTimes t;
    if (auto it = by_step.find(kWholeWindow); it != by_step.end()) t = it->second;
    out.summary = mean(t, static_cast<int>(trace.ranks.size()), window_span);
  }
  return out;
}

}  // namespace commlens::analysis
