// The GPU tests' gate: without a visible GPU the test program exits 77, which CTest
// reports as skipped (SKIP_RETURN_CODE), so CI machines without GPUs skip them.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "bench/driver.h"

namespace commlens::bench {

class NeedsGpu : public ::testing::Environment {
 public:
  explicit NeedsGpu(const char* program) : program_(program) {}
  void SetUp() override {
    if (VisibleGpuCount() == 0) {
      std::fprintf(stderr, "%s: no GPU visible, skipped\n", program_);
      std::_Exit(77);
    }
  }

 private:
  const char* program_;
};

}  // namespace commlens::bench
