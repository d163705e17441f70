// The GPU tests' guard (label gpu): without a visible GPU the test program exits 77,
// which ctest counts as skipped (SKIP_RETURN_CODE), before any test runs.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace commlens::testing {

class NeedsGpu : public ::testing::Environment {
 public:
  NeedsGpu(int (*devices)(), const char* program) : devices_(devices), program_(program) {}
  void SetUp() override {
    if (devices_() == 0) {
      std::fprintf(stderr, "%s: no GPU visible, skipped\n", program_);
      std::_Exit(77);
    }
  }

 private:
  int (*devices_)();
  const char* program_;
};

}  // namespace commlens::testing
