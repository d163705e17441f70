// The Paraver object model of a job, and the value tables its events refer to.
//
// One application; task k is Trace::ranks[k-1]; a task's threads are the rank's distinct
// (device, stream) pairs of kept GPU activities, in (device, stream) order, then one
// thread for the rank's kept NCCL ops that have no GPU activity (native recordings time
// ops on the host side of NCCL, with no kernel), so such ranks still show. A rank with
// neither gets one empty placeholder thread: Paraver requires at least one per task.
// Global thread indices are task-major, the order Paraver numbers threads in.
//
// Times: Paraver wants non-negative integers, so every time written is the model's ns
// minus |origin|, the earliest start of any kept row of the job; |end| is the latest end
// on that scale.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/export.h"
#include "model/trace.h"

namespace commlens::exporters::paraver {

struct Thread {
  uint32_t rank_index = 0;
  uint32_t task = 0;    // 1-based, as in the .prv
  uint32_t thread = 0;  // 1-based within its task
  int32_t device = -1;
  int32_t stream = -1;
  bool comm_ops = false;  // rows are CommOps rows (ops without GPU activity), not GpuActivities rows
  // Kept rows, sorted by (start, longer first, row): the order the overlap rule sweeps.
  std::vector<uint32_t> rows;

  bool placeholder() const { return !comm_ops && device < 0; }
};

// Where one communication op shows: its thread and its time there.
struct OpPlace {
  uint32_t thread = 0;  // global thread index
  model::TimeNs start = 0;
  model::TimeNs end = 0;
};

class Layout {
 public:
  Layout(const model::Trace& trace, const Selection& selection);

  const std::vector<Thread>& threads() const { return threads_; }
  // Threads of rank |rank_index|: [first_thread(r), first_thread(r + 1)).
  uint32_t first_thread(size_t rank_index) const { return first_thread_[rank_index]; }
  model::TimeNs origin() const { return origin_; }
  model::TimeNs end() const { return end_; }  // relative to origin

  // Names of what runs on a thread: value v (1-based) is names()[v - 1]. GPU activities
  // by their name; an op without GPU activity as "NCCL <op>" ("NCCL all_reduce").
  const std::vector<std::string>& names() const { return names_; }
  uint32_t NameValue(size_t rank_index, model::StringId name) const { return name_value_[rank_index][name.value]; }
  uint32_t OpNameValue(model::CommOp op) const { return op_name_value_[static_cast<size_t>(op)]; }

  // The thread and time of a kept op (CommOps |row| of rank |rank_index|), or nullopt.
  std::optional<OpPlace> PlaceOf(uint32_t rank_index, uint32_t row) const;

 private:
  void AddRank(uint32_t rank_index);
  void NameRows(const Thread& t, std::unordered_map<std::string, uint32_t>* index);
  uint32_t Intern(std::string name, std::unordered_map<std::string, uint32_t>* index);

  const model::Trace& trace_;
  const Selection& selection_;
  std::vector<Thread> threads_;
  std::vector<uint32_t> first_thread_;  // ranks + 1 entries
  model::TimeNs origin_ = 0;
  model::TimeNs end_ = 0;
  bool has_rows_ = false;
  std::vector<std::string> names_;
  std::vector<std::vector<uint32_t>> name_value_;  // per rank: StringId -> value, 0 = none
  std::array<uint32_t, static_cast<size_t>(model::CommOp::kCount)> op_name_value_{};
};

// "rank 3 (node12)" (hostname when the trace has one) and "rank 3 GPU 0 stream 7".
std::string TaskLabel(const model::RankTrace& rank);
std::string ThreadLabel(const model::RankTrace& rank, const Thread& thread);

}  // namespace commlens::exporters::paraver
