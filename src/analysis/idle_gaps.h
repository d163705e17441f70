// Idle gaps on each GPU stream and why the stream waited.
//
// For consecutive activities on one stream (kernels, copies, sets; not sync markers), the
// gap before an activity is classified, as HTA does:
//   host_wait   the host launched it after the previous one had ended: the GPU waited
//               for the CPU
//   kernel_wait the launch was already queued and the gap is shorter than the threshold
//               (default 30 us): launch overhead between back-to-back kernels
//   other       queued, yet a long gap: a wait on another stream, an event, a sync
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

enum class GapKind : uint8_t { kHostWait, kKernelWait, kOther };
std::string_view GapKindName(GapKind k);  // "host_wait", "kernel_wait", "other"

// Histogram bins by gap length: <1us, 1-10us, 10-100us, 100us-1ms, 1-10ms, >=10ms.
constexpr int kGapBins = 6;
std::string_view GapBinLabel(int bin);

struct Gap {
  model::TimeNs start = 0;
  model::TimeNs length = 0;
  GapKind kind = GapKind::kOther;
  std::string before;  // activity that ended before the gap
  std::string after;   // activity that started after it
};

struct StreamIdle {
  int32_t device = 0;
  int32_t stream = 0;
  size_t activities = 0;
  model::TimeNs busy = 0;
  model::TimeNs idle = 0;
  std::array<model::TimeNs, 3> kind_time{};
  std::array<uint64_t, 3> kind_count{};
  std::array<uint64_t, kGapBins> bin_count{};
  std::array<model::TimeNs, kGapBins> bin_time{};
  std::vector<Gap> longest;  // longest first

  uint64_t gaps() const { return kind_count[0] + kind_count[1] + kind_count[2]; }
  // The share of the idle time that gaps of kind |k| take; 0 without idle time.
  double KindShare(int k) const { return idle > 0 ? static_cast<double>(kind_time[k]) / idle : 0.0; }
};

struct IdleOptions {
  model::TimeNs kernel_wait_threshold = 30'000;  // ns
  size_t longest = 5;
};

std::vector<StreamIdle> ComputeIdleGaps(const model::RankTrace& rank,
                                        const std::vector<uint32_t>& rows,
                                        const IdleOptions& options);

// Every stream of every rank summed: the histogram by gap length, the gaps by kind, and
// the job's longest gaps (of the streams' longest, the |longest| longest, longest first;
// equal lengths in no set order).
struct JobIdle {
  struct RankGap {
    int rank = 0;
    int32_t stream = 0;
    Gap gap;
  };
  size_t streams = 0;
  std::array<uint64_t, kGapBins> bin_count{};
  std::array<model::TimeNs, kGapBins> bin_time{};
  std::array<uint64_t, 3> kind_count{};
  std::array<model::TimeNs, 3> kind_time{};
  std::vector<RankGap> longest;
};

// |ranks|: each rank's number and its streams (ComputeIdleGaps).
JobIdle SumIdleGaps(const std::vector<std::pair<int, const std::vector<StreamIdle>*>>& ranks, size_t longest);

}  // namespace commlens::analysis
