// Replays every file of a fuzzer corpus through its target in the normal (gcc) build, so
// the inputs that once found bugs, and the seeds, stay covered by the test suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

TEST(FuzzReplay, Corpus) {
  std::string dir = std::string(COMMLENS_SOURCE_DIR) + "/fuzz/corpus/" + COMMLENS_FUZZ_CORPUS;
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0)
        << entry.path();
    ++files;
  }
  EXPECT_GT(files, 0u) << "empty corpus " << dir;
}
