// Appends decoded Kineto events to a rank's columnar tables, then finishes the rank:
// moves times onto the Unix epoch, sorts GPU activities by start, links each activity to
// the host call that launched it, derives profiler steps and sequence numbers.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "importers/kineto/kineto_event.h"
#include "model/trace.h"

namespace commlens::importers {

class KinetoTableWriter {
 public:
  explicit KinetoTableWriter(model::RankTrace* rank) : rank_(rank) {}

  // |offset| is the event's byte offset in the decoded file, kept for error reports.
  void Add(const KinetoEvent& event, uint64_t offset);

  // |base_ns| is added to every time (Kineto's baseTimeNanoseconds, 0 when absent).
  void Finish(int64_t base_ns);

 private:
  void AddGpuActivity(const KinetoEvent& e, model::ActivityKind kind, uint64_t offset);
  void AddCommOp(const KinetoEvent& e, uint32_t activity, uint64_t offset);
  model::ActivityClass ClassOf(model::StringId name, model::ActivityKind kind);
  void SortGpuActivities();
  void LinkLaunches();
  void NumberCollectives();
  void CollectSteps();

  model::RankTrace* rank_;
  // Per-name class cache: classification runs once per distinct kernel name.
  std::unordered_map<uint32_t, model::ActivityClass> class_cache_;
};

// "[0, 1, 2, 3]" -> {0,1,2,3}; stops at "..." (truncated lists) or anything else.
std::vector<int> ParseRankList(std::string_view text);

}  // namespace commlens::importers
