// One Paraver thread's state (type 1) and event (type 2) records, produced in time order
// one change point at a time: a cursor over the thread's rows that holds nothing beyond
// the current change point and a stack of the activities still running.
//
// The states partition [origin, origin + end] of the job: idle where nothing runs,
// otherwise the state of the activity that holds the thread. Overlap rule (activities on
// one GPU stream do not overlap in practice; clock rounding and host-timed NCCL ops can):
// the most recently started activity holds the thread until it ends; the activity it
// interrupted, if still running then, holds the thread again and its values are written
// again (without its sequence number, which marks a begin). Of activities starting at the
// same time, the longer one is pushed first, so the shorter one shows and the longer one
// resumes after it.
//
// At each change point t (an activity starts, or the holder ends) the cursor yields, in
// order: a state record [t, next change point) unless that is empty, then one event
// record holding, in order, the begin values of the activities that start at t but do
// not hold the thread (hidden under a later start, or of zero length), 0 for every type
// set before that the new holder does not set, then the holder's values. So every
// activity with a kept row writes its name at its begin, and "last event value" views see
// what runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exporters/paraver/paraver_layout.h"
#include "model/trace.h"

namespace commlens::exporters::paraver {

class ThreadTimeline {
 public:
  ThreadTimeline(const model::RankTrace& rank, const Thread& thread, const Layout& layout);

  bool done() const { return phase_ == Phase::kDone; }
  model::TimeNs time() const { return at_; }  // of the pending record (model time)
  int record_type() const { return phase_ == Phase::kState ? 1 : 2; }
  // Appends the pending record's line (with '\n') and moves to the next record.
  void Emit(fmt::memory_buffer* out);

 private:
  enum class Phase : uint8_t { kState, kEvents, kDone };
  struct Values;

  model::TimeNs Start(uint32_t row) const { return (*start_)[row]; }
  model::TimeNs End(uint32_t row) const { return std::max((*start_)[row], (*end_)[row]); }
  Values ValuesOf(uint32_t row) const;
  // When the state after a change point ends: |holder| ends or a later activity of
  // non-zero length starts (the job's end when neither).
  model::TimeNs NextChange(uint32_t holder) const;
  void AppendValues(const Values& v, bool begin);
  void Step();  // computes the next change point

  const model::RankTrace& rank_;
  const Thread& thread_;
  const Layout& layout_;
  const std::vector<model::TimeNs>* start_;
  const std::vector<model::TimeNs>* end_;
  model::TimeNs job_end_;  // model time

  size_t next_ = 0;              // index in thread_.rows of the next activity to start
  std::vector<uint32_t> stack_;  // running activities (rows); the back holds the thread
  uint32_t holder_ = model::kNoIndex;

  // The pending change point, and the state in force (it ends at |state_end_|).
  Phase phase_ = Phase::kDone;
  model::TimeNs at_ = 0;
  model::TimeNs state_end_ = 0;
  int32_t state_ = 0;
  std::vector<std::pair<int32_t, int64_t>> events_;
};

}  // namespace commlens::exporters::paraver
