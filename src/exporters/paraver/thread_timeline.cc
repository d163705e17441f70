#include "exporters/paraver/thread_timeline.h"

#include <iterator>
#include <limits>

#include "exporters/paraver/paraver_ids.h"

namespace commlens::exporters::paraver {

namespace {

constexpr model::TimeNs kNever = std::numeric_limits<model::TimeNs>::max();

// The event types an activity sets and later clears, in the order zeros are written;
// a Values::mask bit i stands for kClearable[i].
constexpr int32_t kClearable[] = {kEventKernelName, kEventNcclName,  kEventMemoryName, kEventOtherName,
                                  kEventCollectiveOp, kEventBytes, kEventGroup};
constexpr uint8_t Bit(int32_t type) {
  for (uint8_t i = 0; i < std::size(kClearable); ++i)
    if (kClearable[i] == type) return static_cast<uint8_t>(1u << i);
  return 0;
}

State StateOf(model::ActivityClass c) {
  switch (c) {
    case model::ActivityClass::kCompute: return kStateCompute;
    case model::ActivityClass::kCommunication: return kStateCommunication;
    case model::ActivityClass::kMemory: return kStateMemory;
    default: return kStateOther;
  }
}

EventType NameTypeOf(model::ActivityClass c) {
  switch (c) {
    case model::ActivityClass::kCompute: return kEventKernelName;
    case model::ActivityClass::kCommunication: return kEventNcclName;
    case model::ActivityClass::kMemory: return kEventMemoryName;
    default: return kEventOtherName;
  }
}

}  // namespace

// What one activity shows: its state and its event values (absent: < 0, or 0 for names).
struct ThreadTimeline::Values {
  int32_t state = kStateOther;
  int32_t name_type = 0;  // 0: no name (an op without a kernel)
  int64_t name = 0;
  int64_t op = 0;         // 1 + model::CommOp, 0: not an op
  int64_t bytes = -1;
  int64_t group = 0;      // 1 + job group, 0: unknown
  int64_t seq = -1;
  uint8_t mask = 0;       // kClearable bits this activity sets
};

ThreadTimeline::ThreadTimeline(const model::RankTrace& rank, const Thread& thread, const Layout& layout)
    : rank_(rank), thread_(thread), layout_(layout) {
  start_ = thread.comm_ops ? &rank.comms.start : &rank.gpu.start;
  end_ = thread.comm_ops ? &rank.comms.end : &rank.gpu.end;
  job_end_ = layout.origin() + layout.end();
  if (thread.rows.empty()) return;  // a placeholder thread has no records
  // Idle from the job's first timestamp to this thread's first activity.
  at_ = layout.origin();
  state_ = kStateIdle;
  state_end_ = NextChange(model::kNoIndex);
  phase_ = Phase::kState;
  if (state_end_ <= at_) Step();
}

model::TimeNs ThreadTimeline::NextChange(uint32_t holder) const {
  // Zero-length activities write events but never take the thread: skip them.
  model::TimeNs next = holder != model::kNoIndex ? End(holder) : kNever;
  for (size_t k = next_; k < thread_.rows.size(); ++k)
    if (End(thread_.rows[k]) > Start(thread_.rows[k])) {
      next = std::min(next, Start(thread_.rows[k]));
      break;
    }
  return next == kNever ? job_end_ : next;
}

ThreadTimeline::Values ThreadTimeline::ValuesOf(uint32_t row) const {
  Values v;
  uint32_t op_row = row;
  if (!thread_.comm_ops) {
    const model::GpuActivities& g = rank_.gpu;
    v.state = StateOf(g.cls[row]);
    v.name_type = NameTypeOf(g.cls[row]);
    v.name = layout_.NameValue(thread_.rank_index, g.name[row]);
    v.mask |= Bit(v.name_type);
    if (g.kind[row] == model::ActivityKind::kMemcpy || g.kind[row] == model::ActivityKind::kMemset)
      v.bytes = g.bytes[row];
    op_row = g.comm[row];
  } else {
    v.state = kStateCommunication;
    v.name_type = kEventNcclName;
    v.name = layout_.OpNameValue(rank_.comms.op[row]);
    v.mask |= Bit(v.name_type);
  }
  if (op_row != model::kNoIndex) {
    const model::CommOps& c = rank_.comms;
    v.op = 1 + static_cast<int64_t>(c.op[op_row]);
    v.bytes = c.bytes[op_row];
    v.seq = c.seq[op_row];
    if (c.group[op_row] != model::kNoIndex && rank_.groups[c.group[op_row]].job_group != model::kNoIndex)
      v.group = 1 + static_cast<int64_t>(rank_.groups[c.group[op_row]].job_group);
    v.mask |= Bit(kEventCollectiveOp);
    if (v.group > 0) v.mask |= Bit(kEventGroup);
  }
  if (v.bytes >= 0) v.mask |= Bit(kEventBytes);
  return v;
}

void ThreadTimeline::AppendValues(const Values& v, bool begin) {
  if (v.name_type != 0) events_.emplace_back(v.name_type, v.name);
  if (v.op > 0) events_.emplace_back(kEventCollectiveOp, v.op);
  if (v.bytes >= 0) events_.emplace_back(kEventBytes, v.bytes);
  if (v.group > 0) events_.emplace_back(kEventGroup, v.group);
  if (begin && v.seq >= 0) events_.emplace_back(kEventSequence, v.seq);
}

void ThreadTimeline::Step() {
  const std::vector<uint32_t>& rows = thread_.rows;
  for (;;) {
    events_.clear();
    const model::TimeNs next_start = next_ < rows.size() ? Start(rows[next_]) : kNever;
    const model::TimeNs holder_end = holder_ != model::kNoIndex ? End(holder_) : kNever;
    const model::TimeNs t = std::min(next_start, holder_end);
    if (t == kNever) {
      phase_ = Phase::kDone;
      return;
    }
    // Activities that ended by t leave (those under the holder leave silently); those
    // starting at t come in; zero-length ones leave again at once.
    const uint32_t previous = holder_;
    while (!stack_.empty() && End(stack_.back()) <= t) stack_.pop_back();
    const size_t first_begin = next_;
    while (next_ < rows.size() && Start(rows[next_]) == t) stack_.push_back(rows[next_++]);
    while (!stack_.empty() && End(stack_.back()) <= t) stack_.pop_back();
    holder_ = stack_.empty() ? model::kNoIndex : stack_.back();

    uint8_t cleared = previous != model::kNoIndex ? ValuesOf(previous).mask : 0;
    bool holder_began = false;
    for (size_t k = first_begin; k < next_; ++k) {
      if (rows[k] == holder_) {
        holder_began = true;
        continue;
      }
      Values v = ValuesOf(rows[k]);
      AppendValues(v, true);
      cleared |= v.mask;
    }
    Values held;
    if (holder_ != model::kNoIndex) held = ValuesOf(holder_);
    for (size_t i = 0; i < std::size(kClearable); ++i)
      if ((cleared & ~held.mask) & (1u << i)) events_.emplace_back(kClearable[i], 0);
    if (holder_ != model::kNoIndex && (holder_ != previous || next_ > first_begin)) AppendValues(held, holder_began);

    // A new state unless only zero-length activities came and went inside the current one.
    at_ = t;
    if (t >= state_end_) {
      state_ = holder_ != model::kNoIndex ? held.state : kStateIdle;
      state_end_ = NextChange(holder_);
      if (state_end_ > at_) {
        phase_ = Phase::kState;
        return;
      }
    }
    if (!events_.empty()) {
      phase_ = Phase::kEvents;
      return;
    }
  }
}

void ThreadTimeline::Emit(fmt::memory_buffer* out) {
  const model::TimeNs origin = layout_.origin();
  auto it = fmt::appender(*out);
  if (phase_ == Phase::kState) {
    it = fmt::format_to(it, "1:0:1:{}:{}:{}:{}:{}\n", thread_.task, thread_.thread, at_ - origin,
                        state_end_ - origin, state_);
    if (!events_.empty()) {
      phase_ = Phase::kEvents;
      return;
    }
  } else if (phase_ == Phase::kEvents) {
    it = fmt::format_to(it, "2:0:1:{}:{}:{}", thread_.task, thread_.thread, at_ - origin);
    for (const auto& [type, value] : events_) it = fmt::format_to(it, ":{}:{}", type, value);
    *it++ = '\n';
  } else {
    return;
  }
  Step();
}

}  // namespace commlens::exporters::paraver
