// One Kineto trace event, decoded from JSON into plain fields (kineto_event_parser.h).
// Strings are views into the JSON parser's buffers: valid until the document is done.
// Only the fields and args commlens uses are decoded; the rest is skipped.
#pragma once

#include <cstdint>
#include <string_view>

namespace commlens::importers {

struct KinetoCollectiveArgs {
  std::string_view name;  // "allreduce", "all_to_allv", ...
  std::string_view dtype;
  std::string_view group_name;
  std::string_view group_desc;
  std::string_view group_ranks;  // "[0, 1, 2, 3]", possibly truncated with "..."
  int64_t in_elems = -1;
  int64_t out_elems = -1;
  int64_t group_size = -1;
  int64_t seq = -1;
  int64_t src_rank = -1;
  int64_t dst_rank = -1;
  bool present() const { return !name.empty(); }
};

struct KinetoEvent {
  char ph = 0;
  std::string_view cat;
  std::string_view name;
  int64_t pid = -1;
  int64_t tid = -1;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  bool has_ts = false;
  bool has_dur = false;
  int64_t id = -1;  // flow events' id
  // args
  int64_t correlation = 0;
  int64_t stream = -1;
  int64_t device = -1;
  int64_t bytes = -1;
  std::string_view label;  // args.name: metadata events' value (thread_name, process_name)
  KinetoCollectiveArgs coll;
  // what went wrong with a field whose type did not fit (nullptr when none)
  const char* bad_field = nullptr;
};

}  // namespace commlens::importers
