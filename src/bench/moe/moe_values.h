// The verifiable MoE input, shared by the planner's CPU checks and the GPU kernels:
// element h of token t of rank r is a small integer in [-4, 4], so that the combine's
// sum of up to 64 copies stays exact in bf16 (integers up to 256 are).
#pragma once

#include "bench/host_device.h"

namespace commlens::bench {

COMMLENS_HD float MoeInputValue(int rank, int token, int h) {
  return static_cast<float>((rank * 131 + token * 17 + h * 7) % 9 - 4);
}

}  // namespace commlens::bench
