// Builds small RankTraces by hand for analysis unit tests.
#pragma once

#include <string>
#include <vector>

#include "model/activity_class.h"
#include "model/trace.h"

namespace commlens::testing {

class SyntheticRank {
 public:
  SyntheticRank() { rank.rank = 0; rank.world_size = 2; }

  // A GPU activity on |stream| launched at |launch| (kNoTime: no launch in the trace).
  uint32_t Gpu(const std::string& name, model::TimeNs start, model::TimeNs end, int stream = 7,
               model::TimeNs launch = 0,
               model::ActivityKind kind = model::ActivityKind::kKernel) {
    model::StringId n = rank.strings.Intern(name);
    uint32_t row = rank.gpu.Append(start, end, n, 0, stream, ++correlation_, kind);
    rank.gpu.cls[row] = model::ClassifyActivity(name, kind);
    rank.gpu.launch[row] = launch;
    return row;
  }
  void Step(int64_t number, model::TimeNs start, model::TimeNs end) {
    model::StringId n = rank.strings.Intern("ProfilerStep#" + std::to_string(number));
    rank.annotations.Append(start, end, n, {}, 1, 1, -1);
    rank.steps.push_back({number, start, end});
  }

  model::RankTrace rank;

 private:
  int64_t correlation_ = 0;
};

// Every GPU activity row of |r|: the window an analysis covers with no filtering.
inline std::vector<uint32_t> All(const model::RankTrace& r) {
  std::vector<uint32_t> rows(r.gpu.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

}  // namespace commlens::testing
