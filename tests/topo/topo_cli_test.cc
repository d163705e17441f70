// The commlens binary: `commlens topo` on this machine (whatever it has), on fake sysfs
// trees through --sysfs-root, exit codes of --check, of usage errors and of a JSON not written.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "topo/fake_machine.h"

namespace commlens::topo {
namespace {

using testing::TempDir;

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

// Runs commlens with |args| (already shell-quoted where needed), stdout captured.
CommandResult Commlens(const std::string& args) {
  std::string command = std::string(COMMLENS_BINARY_DIR) + "/src/cli/commlens " + args + " 2>/dev/null";
  CommandResult run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::filesystem::path MakeTree(const TempDir& dir, const std::string& spec) {
  auto machine = testing::BuildFakeMachine(spec, dir.path() / "root");
  EXPECT_TRUE(machine.ok()) << machine.status().message();
  return dir.path() / "root";
}

TEST(TopoCli, RunsOnThisMachine) {
  TempDir dir;
  std::filesystem::path json = dir.path() / "topo.json";
  CommandResult run = Commlens("topo --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("commlens topo: "), std::string::npos);
  EXPECT_NE(run.out.find("\nNUMA nodes\n"), std::string::npos);
  nlohmann::json doc = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(doc["schema_version"], 1);
  size_t pci_nics = 0;
  for (const auto& nic : doc["nics"]) pci_nics += !nic["pci"].is_null();
  EXPECT_EQ(doc["matrix"]["labels"].size(), doc["gpus"].size() + pci_nics);
  if (doc["gpus"].empty()) {
    EXPECT_NE(run.out.find("no NVIDIA GPU on the PCI bus"), std::string::npos);
  }
}

TEST(TopoCli, FakeRootWithoutGpuFacts) {
  TempDir dir;
  std::filesystem::path root = MakeTree(dir, testing::ReadSpec("four_gpu_ib"));
  CommandResult run = Commlens("topo --json - --sysfs-root " + root.string());
  ASSERT_EQ(run.exit_code, 0);
  nlohmann::json doc = nlohmann::json::parse(run.out);
  // NVML is not asked about another machine: the GPU pairs fall back to their PCI paths.
  const std::vector<std::vector<std::string>> expected = {
      {"X", "PHB", "SYS", "SYS", "PIX", "PHB", "SYS", "SYS"},
      {"PHB", "X", "SYS", "SYS", "PHB", "PIX", "SYS", "SYS"},
      {"SYS", "SYS", "X", "NODE", "SYS", "SYS", "PIX", "NODE"},
      {"SYS", "SYS", "NODE", "X", "SYS", "SYS", "NODE", "PIX"},
      {"PIX", "PHB", "SYS", "SYS", "X", "PHB", "SYS", "SYS"},
      {"PHB", "PIX", "SYS", "SYS", "PHB", "X", "SYS", "SYS"},
      {"SYS", "SYS", "PIX", "NODE", "SYS", "SYS", "X", "NODE"},
      {"SYS", "SYS", "NODE", "PIX", "SYS", "SYS", "NODE", "X"},
  };
  EXPECT_EQ(doc["matrix"]["cells"].get<std::vector<std::vector<std::string>>>(), expected);
  EXPECT_EQ(doc["gpu_facts"]["nvml"], false);
  EXPECT_NE(doc["notes"].dump().find("NVML and CUDA not queried"), std::string::npos);
  EXPECT_EQ(doc["cpu_topology_source"], "sysfs");
}

TEST(TopoCli, CheckExitCodes) {
  TempDir healthy, faulty;
  std::string spec = testing::ReadSpec("four_gpu_ib");
  EXPECT_EQ(Commlens("topo --check --sysfs-root " + MakeTree(healthy, spec).string()).exit_code, 0);
  size_t at = spec.find("infiniband mlx5_2 pci=0000:84:00.0");
  ASSERT_NE(at, std::string::npos);
  spec.insert(at + std::string("infiniband mlx5_2 pci=0000:84:00.0").size(), " state=\"1: DOWN\"");
  std::filesystem::path root = MakeTree(faulty, spec);
  CommandResult run = Commlens("topo --check --sysfs-root " + root.string());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("warning  port_down: mlx5_2 port 1 is DOWN"), std::string::npos) << run.out;
  // Without --check the report is written and the exit code stays 0.
  run = Commlens("topo --sysfs-root " + root.string());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("run with --check to see them"), std::string::npos);
}

TEST(TopoCli, UsageErrorsExit64LikeEveryVerbs) {
  EXPECT_EQ(Commlens("topo --sysfs-root /nonexistent-commlens-root").exit_code, 64);
  EXPECT_EQ(Commlens("topo --gpu-facts /nonexistent-commlens-facts.json --no-gpu-probe").exit_code, 64);
  EXPECT_EQ(Commlens("topo --no-such-option").exit_code, 64);
  // Not a usage error: the JSON could not be written.
  EXPECT_EQ(Commlens("topo --json /nonexistent-commlens-dir/topo.json").exit_code, 2);
}

}  // namespace
}  // namespace commlens::topo
