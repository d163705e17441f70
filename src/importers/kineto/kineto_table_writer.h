// Appends decoded Kineto events to a rank's columnar tables. It only appends: sorting,
// classification, launch links, sequence numbers and steps are the finishing passes'
// (passes/finish.h), the same for every format.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "importers/kineto/kineto_batches.h"
#include "importers/kineto/kineto_event.h"
#include "model/trace.h"

namespace commlens::importers {

class KinetoTableWriter {
 public:
  // |drop_host_events|: append only the host events the per-rank passes read (CUDA
  // runtime and driver calls, which link launches) and the ProfilerStep#N ranges, and the
  // one that ends last; count the others in RankTrace::host_events_dropped (analyze:
  // model/host_events.h drops the rest after the passes).
  explicit KinetoTableWriter(model::RankTrace* rank, bool drop_host_events = false)
      : rank_(rank), drop_host_events_(drop_host_events) {}

  // |offset| is the event's byte offset in the decoded file, kept for error reports.
  void Add(const KinetoEvent& event, uint64_t offset);

  // Moves every time onto the Unix epoch: |base_ns| is Kineto's baseTimeNanoseconds
  // (0 when absent), added once the whole document is read.
  void Finish(int64_t base_ns);

 private:
  void AddComplete(const KinetoEvent& e, uint64_t offset);
  void AddMetadata(const KinetoEvent& e);
  void AddFlow(const KinetoEvent& e, model::FlowPhase phase, uint64_t offset);
  void AddGpuActivity(const KinetoEvent& e, model::ActivityKind kind);
  void AddCommOp(const KinetoEvent& e, uint32_t activity, uint64_t offset);
  // The op a collective's args describe (group, size, peer), for a kernel's row or a
  // batch's host op; unknown dtypes and out-of-range ranks counted at |offset|.
  HostCommOp DescribeComm(const KinetoEvent& e, model::CommOp op, uint64_t offset);
  // The pool's id of |name|, through a small cache: a trace repeats a few thousand
  // names hundreds of thousands of times, and a hit costs one compare, not a hash of
  // the whole (often 200-byte kernel) name.
  model::StringId InternName(std::string_view name);

  struct CachedName {
    std::string_view text;  // the pool's copy
    model::StringId id;
  };
  // Whether a host event or annotation is left out for not being a ProfilerStep#N range
  // or a pipeline schedule's action (a host "PP:..." range); counted.
  bool DropUnlessStep(const KinetoEvent& e);
  // Whether a host event is left out (all but the launch calls and the ProfilerStep#N
  // ranges); counted, its span kept when it ends last.
  bool DropHostEvent(const KinetoEvent& e, model::HostKind kind);

  model::RankTrace* rank_;
  bool drop_host_events_;
  // The span of the left-out host event that ends last: appended at Finish as a row of
  // its own (no name: it only says where the trace ends).
  int64_t last_host_start_ = 0, last_host_end_ = INT64_MIN;
  std::array<CachedName, 1024> names_{};
  KinetoBatches batches_;
};

// "[0, 1, 2, 3]" -> {0,1,2,3}; stops at "..." (truncated lists) or anything else, and
// at a number beyond int's range (a bad field, not a wrapped rank: |*out_of_range|).
std::vector<int> ParseRankList(std::string_view text, bool* out_of_range = nullptr);

}  // namespace commlens::importers
