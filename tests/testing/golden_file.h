// A test's output held against a golden file in the source tree, and the one way to
// rewrite goldens: COMMLENS_UPDATE_GOLDENS=1, which scripts/update_goldens.sh sets.
//
// A run that rewrites a golden has compared nothing, so the test is reported as skipped
// (with the file it wrote), never as passed; the script runs the tests again without the
// variable to compare. Any other value of the variable is a mistake (a typo, "0", "yes"),
// reported as a failure rather than read as either mode.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace commlens::testing {

inline constexpr const char* kUpdateGoldensVariable = "COMMLENS_UPDATE_GOLDENS";

// Compares |actual| with the file |golden|, or rewrites it (see above).
inline void ExpectMatchesGoldenFile(const std::filesystem::path& golden, const std::string& actual) {
  const char* update = std::getenv(kUpdateGoldensVariable);
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(golden.parent_path());
    std::ofstream out(golden, std::ios::binary);
    out << actual;
    out.close();
    ASSERT_TRUE(out) << "could not write " << golden;
    GTEST_SKIP() << "rewrote " << golden << " (" << kUpdateGoldensVariable
                 << "=1): review the diff, then run the test without it";
  }
  if (update != nullptr && *update != '\0')
    ADD_FAILURE() << kUpdateGoldensVariable << "=" << update << " is not understood: 1 rewrites the goldens, "
                  << "unset compares with them";
  std::ifstream in(golden, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden " << golden << " (scripts/update_goldens.sh writes it)";
  std::ostringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual) << "output differs from " << golden;
}

}  // namespace commlens::testing
