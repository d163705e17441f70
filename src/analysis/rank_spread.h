// A per-rank figure over the job's ranks (idle share, wait share, clock offset): the ranks
// in order of it and its distribution, for reports that show a few ranks of many.
#pragma once

#include <cstddef>
#include <vector>

namespace commlens::analysis {

struct RankSpread {
  std::vector<size_t> order;  // indices into the values, largest first; ties keep index order
  double max = 0;
  double p75 = 0;  // nearest-rank quartiles
  double median = 0;
  double p25 = 0;
  double min = 0;
};

// |values| one per rank; an empty list gives an empty order and zeros.
RankSpread SpreadOverRanks(const std::vector<double>& values);

}  // namespace commlens::analysis
