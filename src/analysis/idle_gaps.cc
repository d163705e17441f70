#include "analysis/idle_gaps.h"

#include <algorithm>
#include <map>

#include "common/saturating.h"

namespace commlens::analysis {

std::string_view GapKindName(GapKind k) {
  switch (k) {
    case GapKind::kHostWait:
      return "host_wait";
    case GapKind::kKernelWait:
      return "kernel_wait";
    case GapKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view GapBinLabel(int bin) {
  static constexpr std::string_view kLabels[kGapBins] = {"<1us",      "1-10us", "10-100us",
                                                         "100us-1ms", "1-10ms", ">=10ms"};
  return kLabels[bin];
}

namespace {

int BinOf(model::TimeNs len) {
  int bin = 0;
  for (model::TimeNs bound = 1000; bin < kGapBins - 1 && len >= bound; bound *= 10) ++bin;
  return bin;
}

}  // namespace

std::vector<StreamIdle> ComputeIdleGaps(const model::RankTrace& rank,
                                        const std::vector<uint32_t>& rows,
                                        const IdleOptions& options) {
  const model::GpuActivities& g = rank.gpu;
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_stream;
  for (uint32_t i : rows)
    if (g.kind[i] != model::ActivityKind::kSync) by_stream[{g.device[i], g.stream[i]}].push_back(i);

  std::vector<StreamIdle> out;
  for (auto& [key, list] : by_stream) {
    StreamIdle s;
    s.device = key.first;
    s.stream = key.second;
    s.activities = list.size();
    // |rows| is in start order already; keep it stable for equal starts.
    struct RawGap {
      model::TimeNs start, length;
      GapKind kind;
      uint32_t before, after;  // rows of the activities around the gap
    };
    std::vector<RawGap> gaps;
    model::TimeNs prev_end = model::kNoTime;
    uint32_t prev = 0;
    for (uint32_t i : list) {
      s.busy = SaturatingAdd(s.busy, g.end[i] - g.start[i]);
      if (prev_end != model::kNoTime && g.start[i] > prev_end) {
        model::TimeNs len = g.start[i] - prev_end;
        GapKind kind;
        if (g.launch[i] != model::kNoTime && g.launch[i] > prev_end) kind = GapKind::kHostWait;
        else if (len < options.kernel_wait_threshold) kind = GapKind::kKernelWait;
        else kind = GapKind::kOther;
        int k = static_cast<int>(kind);
        s.idle += len;
        s.kind_time[k] += len;
        ++s.kind_count[k];
        int bin = BinOf(len);
        ++s.bin_count[bin];
        s.bin_time[bin] += len;
        gaps.push_back({prev_end, len, kind, prev, i});
      }
      if (prev_end == model::kNoTime || g.end[i] > prev_end) {
        prev_end = g.end[i];
        prev = i;
      }
    }
    size_t n = std::min(options.longest, gaps.size());
    std::partial_sort(gaps.begin(), gaps.begin() + n, gaps.end(),
                      [](const RawGap& a, const RawGap& b) {
                        return a.length > b.length || (a.length == b.length && a.start < b.start);
                      });
    for (size_t k = 0; k < n; ++k) {  // names only for the few kept
      const RawGap& r = gaps[k];
      s.longest.push_back({r.start, r.length, r.kind, std::string(rank.strings.Get(g.name[r.before])),
                           std::string(rank.strings.Get(g.name[r.after]))});
    }
    out.push_back(std::move(s));
  }
  return out;
}

JobIdle SumIdleGaps(const std::vector<std::pair<int, const std::vector<StreamIdle>*>>& ranks, size_t longest) {
  JobIdle out;
  struct Ref {
    int rank;
    int32_t stream;
    const Gap* gap;
  };
  std::vector<Ref> gaps;
  for (const auto& [rank, streams] : ranks)
    for (const StreamIdle& s : *streams) {
      ++out.streams;
      for (int b = 0; b < kGapBins; ++b) {
        out.bin_count[b] += s.bin_count[b];
        out.bin_time[b] += s.bin_time[b];
      }
      for (int k = 0; k < 3; ++k) {
        out.kind_count[k] += s.kind_count[k];
        out.kind_time[k] += s.kind_time[k];
      }
      for (const Gap& g : s.longest) gaps.push_back({rank, s.stream, &g});
    }
  std::sort(gaps.begin(), gaps.end(), [](const Ref& a, const Ref& b) { return a.gap->length > b.gap->length; });
  for (size_t i = 0; i < gaps.size() && i < longest; ++i)
    out.longest.push_back({gaps[i].rank, gaps[i].stream, *gaps[i].gap});
  return out;
}

}  // namespace commlens::analysis
