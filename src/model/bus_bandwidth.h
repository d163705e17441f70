// The nccl-tests bandwidth definitions (NVIDIA/nccl-tests doc/PERFORMANCE.md), one home
// for the analyses, the exporters and the benchmark:
//   algbw = bytes / time, with bytes = max(send bytes, recv bytes) of one rank
//   busbw = algbw * factor(op, n)
// The factor says how much of the data each rank's link carries for the operation, so a
// busbw is comparable across operations and group sizes.
#pragma once

#include "model/collective.h"

namespace commlens::model {

// nccl-tests bus-bandwidth factor for |n| ranks: all-reduce 2(n-1)/n; all-gather,
// reduce-scatter, all-to-all, gather, scatter (n-1)/n; broadcast, reduce, p2p 1.
double BusBwFactor(CommOp op, int n);

}  // namespace commlens::model
