// The Jacobi problem on the CPU: how rows split over ranks, the boundary values, and the
// reference solution the GPU variants are checked against (stencil.h holds the update).
#pragma once

#include <cstdint>
#include <vector>

namespace commlens::bench {

struct RowRange {
  int first = 0;  // global index of the rank's first row
  int rows = 0;
};

// Rows split as evenly as possible; the first (ny mod nranks) ranks get one more.
RowRange SplitRows(int ny, int nranks, int rank);

// The fixed value of columns 0 and nx-1 in global row iy: sin(2 pi iy / ny), so the
// boundary is periodic like the rows.
float JacobiBoundary(int iy, int ny);

// The starting grid, ny rows of nx: boundary columns set, the rest zero.
std::vector<float> JacobiInitialGrid(int nx, int ny);

// |iters| Jacobi iterations of the whole grid (periodic rows), in place.
void JacobiReference(int nx, int ny, int iters, std::vector<float>* grid);

}  // namespace commlens::bench
