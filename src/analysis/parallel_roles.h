// Which parallelism each process group serves (tensor, data, pipeline, expert, context),
// and how much of the step each one's communication leaves exposed, the question a user
// of a TP x DP x PP x EP mesh asks first.
//
// A group's role comes from the first rule that tells (docs/analysis.md, "Parallelism
// roles"), and the rule is reported with it:
//   1. its description, where the trace has one (PyTorch's group_desc: Megatron's
//      "TENSOR_MODEL_PARALLEL_GROUP", torchtitan's mesh dimension names "tp", "dp_shard");
//   2. its operations: mostly send/recv: pipeline; mostly all-to-all: expert;
//   3. its place in the mesh: a group of every rank carrying reductions is data
//      parallel; of the collective dimensions left (groups of one size whose members
//      partition the ranks), a single one is data parallel, and of two, the one whose
//      groups hold consecutive ranks is tensor parallel (the innermost dimension in
//      Megatron's and torchtitan's rank order) and the other data parallel.
// Anything else stays "unknown", with the reason.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/group_comm.h"
#include "analysis/time_breakdown.h"
#include "model/trace.h"

namespace commlens::analysis {

enum class ParallelRole : uint8_t { kUnknown, kTensor, kData, kPipeline, kExpert, kContext, kMixed, kCount };
inline constexpr size_t kRoleCount = static_cast<size_t>(ParallelRole::kCount);

std::string_view RoleName(ParallelRole role);   // "tensor", "data", ...
std::string_view RoleShort(ParallelRole role);  // "TP", "DP", "PP", "EP", "CP", "mixed", "other"

struct GroupRole {
  uint32_t job_group = 0;  // index in Trace::groups
  std::string group;       // its name, description and size there, for the reports
  std::string description;
  int size = 0;
  ParallelRole role = ParallelRole::kUnknown;
  std::string rule;  // which rule named it, in words ("description 'tp'", ...)
};

// Per step (or over the window): each role's communication and its exposed part, the mean
// over the ranks that ran the step, and the mean span the shares are of.
struct RoleTimes {
  int64_t step = kWholeWindow;
  int ranks = 0;
  model::TimeNs span = 0;
  std::array<model::TimeNs, kRoleCount> comm{};
  std::array<model::TimeNs, kRoleCount> exposed{};

  double ExposedPct(ParallelRole r) const {
    return span > 0 ? 100.0 * static_cast<double>(exposed[static_cast<size_t>(r)]) / static_cast<double>(span) : 0.0;
  }
};

struct ParallelRoles {
  std::vector<GroupRole> groups;  // every job group, in Trace::groups order
  bool has_kernels = false;       // some rank has a GPU kernel timeline (else no times)
  std::vector<RoleTimes> steps;   // per profiler step, in step order
  RoleTimes summary;              // over the steps the summary covers (mean), else the window
  // The roles present, in a fixed order (tensor, data, pipeline, expert, context, mixed,
  // unknown), for reports' columns.
  std::vector<ParallelRole> Present() const;
};

// |group_comm[r]|: rank r's ComputeGroupComm; |steps|: the job's per-step means
// (MeanStepBreakdowns); |summarized|: the step numbers the summary covers (empty: none);
// |window_span|: the ranks' mean window span (for a job without steps).
ParallelRoles FindParallelRoles(const model::Trace& trace, const std::vector<const std::vector<GroupComm>*>& group_comm,
                                const std::vector<JobStepBreakdown>& steps, const std::vector<int64_t>& summarized,
                                model::TimeNs window_span);

}  // namespace commlens::analysis
