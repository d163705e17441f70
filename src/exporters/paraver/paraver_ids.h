// The numbers a commlens Paraver trace uses: states, event types and communication tags.
// Declared once here; the .prv records, the .pcf labels, the tests and the views under
// share/paraver/*.cfg all refer to these values (a view that filters on an event type
// names the number, so changing one means changing the .cfg files too).
//
// The GPU activity name types follow nsys2prv's numbering (63000006 CUDA kernel,
// 63000007 NCCL kernel, 63000001 memory operation), so views written for nsys2prv traces
// find kernels in ours; the fourth name type (sync markers) is 63000099, so one range
// [63000001, 63000099] selects every name type (kernel_time_share.cfg). The types
// nsys2prv has no counterpart for live in 64000000+.
#pragma once

#include <cstdint>

namespace commlens::exporters::paraver {

// State records (type 1), one per stretch of a GPU stream's timeline.
enum State : int32_t {
  kStateIdle = 0,           // nothing runs on the stream
  kStateCompute = 1,        // a compute kernel
  kStateCommunication = 2,  // an NCCL kernel, or an NCCL op without GPU timing
  kStateMemory = 3,         // memcpy / memset
  kStateOther = 4,          // synchronization markers and anything unclassified
};
inline constexpr int32_t kStateCount = 5;

// Event types (type 2). Name types carry a value from the job's name table (0 at the end);
// the collective op, bytes and group are set at an op's begin and 0 at its end; the
// sequence number is punctual (set at the begin only, since 0 is a valid number).
enum EventType : int32_t {
  kEventMemoryName = 63000001,   // memcpy / memset: name (value table shared with kernels)
  kEventKernelName = 63000006,   // compute kernel: name
  kEventNcclName = 63000007,     // NCCL kernel (or an NCCL op recorded without one): name
  kEventOtherName = 63000099,    // sync marker or other GPU activity: name
  kEventCollectiveOp = 64000001, // value 1 + model::CommOp
  kEventBytes = 64000002,        // message bytes (nccl-tests size) or memory operation bytes
  kEventGroup = 64000003,        // 1 + index in Trace::groups
  kEventSequence = 64000004,     // sequence number of the op in its group
};

// Communication records (type 3): the tag says what the line means.
enum CommTag : int32_t {
  kTagCollective = 64001,  // a member of a collective -> the member that arrived last
  kTagP2p = 64002,         // a send -> its matching receive
  kTagCopyEngine = 64003,  // as kTagCollective, for copy-engine collectives (NCCL 2.28+)
};

}  // namespace commlens::exporters::paraver
