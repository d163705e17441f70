// Paraver communication records (type 3), one set per row of the matched-operations table
// (model::MatchedOps): the lines Paraver draws between ranks.
//
//   p2p message (kP2p): one record from the send's thread to the receive's thread, tag
//     kTagP2p, size = the send's bytes. Logical and physical send = the send's start;
//     logical receive = the receive's start, physical receive = its end (the data is in).
//   collective (kCollective, kCopyEngine): one record from every member to the member
//     that arrived last (latest start; of equal starts, the first in rank order), sent at
//     the member's start and received at the last arrival's start, so the line spans the
//     time that member waited for the last one. Tag kTagCollective / kTagCopyEngine, size =
//     the member's bytes. n members give n - 1 records; the last arrival sends none.
// Only members whose op the export keeps (Selection) count; times are where the op shows
// on its thread (the kernel's, else the op's own).
#pragma once

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "exporters/paraver/paraver_layout.h"
#include "model/trace.h"

namespace commlens::exporters::paraver {

struct CommRecord {
  model::TimeNs send = 0;  // logical and physical send
  model::TimeNs recv = 0;  // logical receive
  model::TimeNs recv_physical = 0;
  uint32_t from = 0;  // global thread indices
  uint32_t to = 0;
  int64_t size = 0;
  int32_t tag = 0;
};

// Sorted by (send, from, to, recv): the order they go into the .prv.
std::vector<CommRecord> BuildCommRecords(const model::Trace& trace, const Layout& layout);

// Appends the record's .prv line (with '\n'), times relative to the layout's origin.
void AppendCommLine(const CommRecord& c, const Layout& layout, fmt::memory_buffer* out);

}  // namespace commlens::exporters::paraver
