// The Jacobi update of one grid point, shared by the CPU reference and every GPU kernel
// so that all of them compute bit-identical values: the same operands in the same order,
// in float, with no multiply-add to contract.
//
// Grid layout: rows of nx floats; columns 0 and nx-1 hold fixed boundary values; rows are
// periodic. A rank holds its rows with one halo row above (local row 0) and one below
// (local row rows+1).
#pragma once

#include "bench/host_device.h"

namespace commlens::bench {

COMMLENS_HD float JacobiPoint(const float* a, long long nx, long long iy, long long ix) {
  const float horizontal = a[iy * nx + ix + 1] + a[iy * nx + ix - 1];
  const float vertical = a[(iy + 1) * nx + ix] + a[(iy - 1) * nx + ix];
  return 0.25f * (horizontal + vertical);
}

}  // namespace commlens::bench
