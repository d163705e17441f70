// GPU kernel breakdown of one rank: time by class and by overlapping classes (compute,
// communication, memory and their combinations, from one sweep over the merged
// intervals of each class), and every kernel's statistics, longest total first; and the
// same for the whole job, merged from the ranks' breakdowns.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

// Bit set of classes running at once: 1 compute, 2 communication, 4 memory.
enum ClassBits : uint8_t { kComputeBit = 1, kCommBit = 2, kMemoryBit = 4 };
std::string ClassStateLabel(uint8_t bits);  // "compute", "compute+communication", ...

struct KernelStat {
  std::string name;
  model::ActivityClass cls = model::ActivityClass::kCompute;
  uint64_t count = 0;
  model::TimeNs total = 0;
  model::TimeNs min = 0;
  model::TimeNs max = 0;
  double mean = 0;
  double stddev = 0;
};

struct KernelBreakdown {
  std::array<model::TimeNs, 8> state_time{};  // by ClassBits; [0] unused
  std::array<model::TimeNs, 4> class_total{}; // sum of durations by ActivityClass
  std::vector<KernelStat> kernels;            // every kernel name, longest total first
  size_t top_n = 0;                           // how many of them a report lists

  std::span<const KernelStat> top() const {
    return std::span<const KernelStat>(kernels).first(std::min(top_n, kernels.size()));
  }
  uint64_t distinct_names() const { return kernels.size(); }
  // The percentage of |span| that the classes |bits| ran (alone together); 0 without span.
  double StatePct(uint8_t bits, model::TimeNs span) const { return span > 0 ? 100.0 * state_time[bits] / span : 0.0; }
  model::TimeNs rest_total() const;  // total of the kernels beyond top()
  model::TimeNs busy() const;        // time any class ran: every state summed
};

KernelBreakdown ComputeKernelBreakdown(const model::RankTrace& rank,
                                       const std::vector<uint32_t>& rows, size_t top_n);

// The job's kernel table: states summed over ranks, kernels merged by name (count, total,
// min, max, mean and standard deviation as if computed over all launches at once).
KernelBreakdown MergeKernelBreakdowns(const std::vector<const KernelBreakdown*>& ranks, size_t top_n);

}  // namespace commlens::analysis
