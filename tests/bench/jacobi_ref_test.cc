// The Jacobi problem's split and CPU reference (jacobi_ref.h), which the GPU variants
// are checked against.
#include "bench/jacobi/jacobi_ref.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/jacobi/jacobi_config.h"
#include "bench/jacobi/stencil.h"

namespace commlens::bench {
namespace {

TEST(JacobiSplit, CoversEveryRowOnce) {
  for (int ny : {1, 7, 16, 1000})
    for (int n : {1, 2, 3, 8}) {
      if (ny < n) continue;
      int next = 0;
      for (int r = 0; r < n; ++r) {
        RowRange rr = SplitRows(ny, n, r);
        EXPECT_EQ(rr.first, next);
        EXPECT_GE(rr.rows, ny / n);
        EXPECT_LE(rr.rows, ny / n + 1);
        next += rr.rows;
      }
      EXPECT_EQ(next, ny);
    }
}

TEST(JacobiReference, OneIterationByHand) {
  const int nx = 5, ny = 4;
  std::vector<float> g = JacobiInitialGrid(nx, ny);
  EXPECT_EQ(g[1 * nx + 0], JacobiBoundary(1, ny));
  EXPECT_EQ(g[1 * nx + 2], 0.0f);
  std::vector<float> want = g;
  for (int iy = 0; iy < ny; ++iy)
    for (int ix = 1; ix < nx - 1; ++ix) {
      auto at = [&](int y, int x) { return g[((y + ny) % ny) * nx + x]; };
      want[iy * nx + ix] = 0.25f * ((at(iy, ix + 1) + at(iy, ix - 1)) + (at(iy + 1, ix) + at(iy - 1, ix)));
    }
  JacobiReference(nx, ny, 1, &g);
  EXPECT_EQ(g, want);
}

// Many iterations relax towards the steady state: the interior next to the boundary
// takes the boundary's sign, and the update stops changing much.
TEST(JacobiReference, ConvergesTowardsTheBoundary) {
  const int nx = 16, ny = 16;
  std::vector<float> g = JacobiInitialGrid(nx, ny);
  JacobiReference(nx, ny, 2000, &g);
  std::vector<float> next = g;
  JacobiReference(nx, ny, 1, &next);
  double change = 0;
  for (size_t i = 0; i < g.size(); ++i) change = std::max(change, double(std::fabs(next[i] - g[i])));
  EXPECT_LT(change, 1e-4);
  EXPECT_GT(g[4 * nx + 1], 0.0f);   // sin(2 pi 4/16) = 1 at the boundary
  EXPECT_LT(g[12 * nx + 1], 0.0f);  // sin(2 pi 12/16) = -1
}

TEST(JacobiConfig, ParsesVariantsAndValidates) {
  auto v = ParseJacobiVariants({"nccl-overlap,nvshmem", "nccl-overlap"});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<JacobiVariant>{JacobiVariant::kNcclOverlap, JacobiVariant::kNvshmem}));
  auto all = ParseJacobiVariants({"all"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 5u);
  EXPECT_NE(ParseJacobiVariants({"mpi"}).status().message().find("unknown variant 'mpi'"),
            std::string::npos);
  JacobiConfig c;
  EXPECT_TRUE(Validate(c).ok());
  c.nx = 2;
  EXPECT_NE(Validate(c).message().find("--nx"), std::string::npos);
  c = JacobiConfig();
  c.ny = 3;
  EXPECT_NE(ValidateForRanks(c, 4).message().find("fewer rows"), std::string::npos);
}

}  // namespace
}  // namespace commlens::bench
