#include "bench/jacobi/jacobi_ref.h"

#include <cmath>
#include <numbers>

#include "bench/jacobi/stencil.h"

namespace commlens::bench {

RowRange SplitRows(int ny, int nranks, int rank) {
  const int base = ny / nranks;
  const int extra = ny % nranks;
  RowRange r;
  r.rows = base + (rank < extra ? 1 : 0);
  r.first = rank * base + (rank < extra ? rank : extra);
  return r;
}

float JacobiBoundary(int iy, int ny) {
  return static_cast<float>(std::sin(2.0 * std::numbers::pi * iy / ny));
}

std::vector<float> JacobiInitialGrid(int nx, int ny) {
  std::vector<float> g(static_cast<size_t>(nx) * ny, 0.0f);
  for (int iy = 0; iy < ny; ++iy) {
    g[static_cast<size_t>(iy) * nx] = JacobiBoundary(iy, ny);
    g[static_cast<size_t>(iy) * nx + nx - 1] = JacobiBoundary(iy, ny);
  }
  return g;
}

void JacobiReference(int nx, int ny, int iters, std::vector<float>* grid) {
  // Work on ny + 2 rows (the periodic halos copied in), like one rank holding everything.
  const size_t row = static_cast<size_t>(nx);
  std::vector<float> a((ny + 2) * row), b((ny + 2) * row);
  std::copy(grid->begin(), grid->end(), a.begin() + row);
  b = a;
  for (int it = 0; it < iters; ++it) {
    std::copy(a.begin() + ny * row, a.begin() + (ny + 1) * row, a.begin());  // top halo
    std::copy(a.begin() + row, a.begin() + 2 * row, a.begin() + (ny + 1) * row);
    for (int iy = 1; iy <= ny; ++iy)
      for (int ix = 1; ix < nx - 1; ++ix) b[iy * row + ix] = JacobiPoint(a.data(), nx, iy, ix);
    std::swap(a, b);
  }
  std::copy(a.begin() + row, a.begin() + (ny + 1) * row, grid->begin());
}

}  // namespace commlens::bench
