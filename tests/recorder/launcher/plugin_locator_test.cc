// Where `commlens record` finds the plugin: beside the binary, in an install prefix's lib
// or lib/commlens, or in the build tree; and the error that names every place looked in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "recorder/launcher/plugin_locator.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::launcher {
namespace {

namespace fs = std::filesystem;

TEST(PluginLocator, LooksBesideTheBinaryThenInLibThenInTheBuildTree) {
  topo::testing::TempDir dir;
  const fs::path bin = dir.path() / "prefix" / "bin";
  fs::create_directories(bin);
  const std::vector<std::string> places = PluginCandidates(bin.string());
  ASSERT_EQ(places.size(), 4u);
  EXPECT_EQ(places[0], (bin / kPluginFileName).string());
  EXPECT_EQ(places[1], (dir.path() / "prefix/lib" / kPluginFileName).string());
  EXPECT_EQ(places[2], (dir.path() / "prefix/lib/commlens" / kPluginFileName).string());
  EXPECT_EQ(places[3], (dir.path() / "prefix/recorder/nccl_profiler" / kPluginFileName).string());

  Result<std::string> none = FindProfilerPlugin(bin.string());
  ASSERT_FALSE(none.ok());
  for (const std::string& p : places) EXPECT_NE(none.status().message().find(p), std::string::npos) << p;
  EXPECT_NE(none.status().message().find("--no-plugin"), std::string::npos);

  // The install layout wins over the build tree; a folder of that name does not count.
  fs::create_directories(places[3]);
  EXPECT_FALSE(FindProfilerPlugin(bin.string()).ok());
  fs::create_directories(fs::path(places[2]).parent_path());
  std::ofstream(places[2]) << "elf";
  Result<std::string> found = FindProfilerPlugin(bin.string());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, places[2]);
  std::ofstream(places[0]) << "elf";
  EXPECT_EQ(*FindProfilerPlugin(bin.string()), places[0]);
}

// The build tree: the commlens binary in build/src/cli finds build/src/recorder/nccl_profiler.
TEST(PluginLocator, FindsThePluginOfThisBuild) {
  const fs::path cli = fs::path(COMMLENS_BINARY_DIR) / "src" / "cli";
  Result<std::string> found = FindProfilerPlugin(cli.string());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_TRUE(fs::equivalent(*found, PLUGIN_FILE));
}

}  // namespace
}  // namespace commlens::recorder::launcher
