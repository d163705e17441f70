// Golden reports of two fake machines, read through the same code as the live /sys:
// a p5.48xlarge-like node (8 H100 on NVSwitch, 32 EFA) and a 4-GPU node with 4 mlx5
// InfiniBand HCAs. Besides the text and JSON goldens (tests/topo/data/golden/), each
// test states the matrix it expects independently, so a regenerated golden cannot hide a
// wrong classification, and parses the JSON back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topo/discover.h"
#include "topo/fake_machine.h"
#include "topo/gpu_facts_json.h"
#include "topo/render.h"

namespace commlens::topo {
namespace {

using testing::BuildFakeMachine;
using testing::ReadSpec;
using testing::TempDir;

struct Report {
  Topology topology;
  LinkMatrix matrix;
  std::vector<Finding> findings;
};

Report Discover(const std::string& spec, const TempDir& dir) {
  Result<testing::FakeMachine> machine = BuildFakeMachine(spec, dir.path() / "root");
  EXPECT_TRUE(machine.ok()) << machine.status().message();
  RecordedGpuProbe probe(machine->gpu_facts);
  DiscoverOptions options;
  options.gpu_probe = &probe;
  options.use_hwloc = false;
  Report r;
  r.topology = topo::Discover(SysfsRoot(machine->root), options);
  r.matrix = BuildLinkMatrix(r.topology);
  r.findings = RunChecks(r.topology, r.matrix);
  return r;
}

std::vector<std::vector<std::string>> Labels(const LinkMatrix& m) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : m.cells) {
    rows.emplace_back();
    for (const Link& link : row) rows.back().push_back(LinkLabel(link));
  }
  return rows;
}

// The JSON parses back and says what the in-memory report says.
void ExpectJsonMatches(const Report& r, const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema_version"], kTopoSchemaVersion);
  EXPECT_EQ(doc["matrix"]["labels"].get<std::vector<std::string>>(), r.matrix.labels);
  EXPECT_EQ(doc["matrix"]["cells"].get<std::vector<std::vector<std::string>>>(), Labels(r.matrix));
  ASSERT_EQ(doc["gpus"].size(), r.topology.gpus.size());
  for (size_t i = 0; i < r.topology.gpus.size(); ++i) {
    EXPECT_EQ(doc["gpus"][i]["pci"]["bdf"], r.topology.gpus[i].pci.bdf);
    EXPECT_EQ(doc["gpus"][i]["name"], r.topology.gpus[i].name);
    EXPECT_EQ(doc["gpus"][i]["nvlinks"].size(), r.topology.gpus[i].nvlinks.size());
    for (size_t j = 0; j < r.topology.gpus.size(); ++j) {
      std::string read = i == j ? "X" : std::string(P2PStatusCode(r.topology.p2p[i][j].read));
      EXPECT_EQ(doc["p2p"]["read"][i][j], read);
    }
  }
  ASSERT_EQ(doc["nics"].size(), r.topology.nics.size());
  for (size_t i = 0; i < r.topology.nics.size(); ++i) {
    EXPECT_EQ(doc["nics"][i]["name"], r.topology.nics[i].name);
    EXPECT_EQ(doc["nics"][i]["ports"][0]["rate_gbps"], r.topology.nics[i].ports[0].rate_gbps);
  }
  EXPECT_EQ(doc["findings"].size(), r.findings.size());
  EXPECT_EQ(doc["cpu_topology_source"], "sysfs");
}

// The text report (with --check's findings) and the JSON equal their goldens, and the
// JSON parses back.
void ExpectGoldens(const std::string& name, const Report& r) {
  testing::ExpectMatchesGolden(name + ".txt", RenderText(r.topology, r.matrix, r.findings, true));
  std::string json = RenderJson(r.topology, r.matrix, r.findings).dump(2) + "\n";
  testing::ExpectMatchesGolden(name + ".json", json);
  ExpectJsonMatches(r, json);
}

TEST(Golden, FourGpuInfiniBandNode) {
  TempDir dir;
  Report r = Discover(ReadSpec("four_gpu_ib"), dir);
  const std::vector<std::vector<std::string>> expected = {
      {"X", "NV12", "SYS", "SYS", "PIX", "PHB", "SYS", "SYS"},
      {"NV12", "X", "SYS", "SYS", "PHB", "PIX", "SYS", "SYS"},
      {"SYS", "SYS", "X", "NV12", "SYS", "SYS", "PIX", "NODE"},
      {"SYS", "SYS", "NV12", "X", "SYS", "SYS", "NODE", "PIX"},
      {"PIX", "PHB", "SYS", "SYS", "X", "PHB", "SYS", "SYS"},
      {"PHB", "PIX", "SYS", "SYS", "PHB", "X", "SYS", "SYS"},
      {"SYS", "SYS", "PIX", "NODE", "SYS", "SYS", "X", "NODE"},
      {"SYS", "SYS", "NODE", "PIX", "SYS", "SYS", "NODE", "X"},
  };
  EXPECT_EQ(r.matrix.labels, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"}));
  EXPECT_EQ(Labels(r.matrix), expected);
  ASSERT_EQ(r.topology.nics.size(), 4u);
  EXPECT_EQ(r.topology.nics[1].kind, NicKind::kInfiniBand);
  EXPECT_EQ(r.topology.nics[1].netdevs, std::vector<std::string>{"ibp10s0"});
  EXPECT_EQ(r.topology.gpus[2].pci.cpu_affinity, "32-63,96-127");
  EXPECT_EQ(r.topology.p2p[0][2].read, P2PStatus::kChipsetNotSupported);
  EXPECT_EQ(ExitCodeFor(r.findings), 0);
  ExpectGoldens("four_gpu_ib", r);
}

TEST(Golden, P5LikeNodeWithEfa) {
  TempDir dir;
  Report r = Discover(ReadSpec("p5_48xlarge"), dir);
  ASSERT_EQ(r.topology.gpus.size(), 8u) << "NVSwitches must not count as GPUs";
  ASSERT_EQ(r.topology.nics.size(), 32u);
  ASSERT_EQ(r.matrix.labels.size(), 40u);
  for (const RdmaNic& nic : r.topology.nics) EXPECT_EQ(nic.kind, NicKind::kEfa) << nic.name;
  EXPECT_EQ(r.topology.nics.front().name, "rdmap20s0");
  EXPECT_EQ(r.topology.nics.back().name, "rdmap247s0");
  for (size_t g = 0; g < 8; ++g) {
    for (size_t h = 0; h < 8; ++h) EXPECT_EQ(LinkLabel(r.matrix.at(g, h)), g == h ? "X" : "NV18");
    // Its own four EFA devices on its switch, the rest of its NUMA node NODE, others SYS.
    for (size_t k = 0; k < 32; ++k) {
      std::string want = k / 4 == g ? "PIX" : (k / 16 == g / 4 ? "NODE" : "SYS");
      EXPECT_EQ(LinkLabel(r.matrix.at(g, 8 + k)), want) << "GPU" << g << " NIC" << k;
    }
  }
  EXPECT_EQ(r.topology.gpus[5].pci.numa_node, 1);
  EXPECT_EQ(r.topology.gpus[5].pci.cpu_affinity, "48-95,144-191");
  EXPECT_EQ(r.topology.net_interfaces.size(), 1u);
  EXPECT_EQ(r.topology.net_interfaces[0].speed_mbps, -1);
  EXPECT_EQ(r.topology.virtual_interfaces, (std::vector<std::string>{"docker0", "lo"}));
  EXPECT_EQ(ExitCodeFor(r.findings), 0);
  ExpectGoldens("p5_48xlarge", r);
}

// GPU facts read back from a report rebuild that report from the same sysfs tree: what
// `commlens topo --sysfs-root SNAPSHOT --gpu-facts topo.json` relies on.
TEST(Golden, RecordedGpuFactsRebuildTheReport) {
  for (const std::string name : {"four_gpu_ib", "p5_48xlarge"}) {
    TempDir dir;
    Report original = Discover(ReadSpec(name), dir);
    nlohmann::json doc = nlohmann::json::parse(RenderJson(original.topology, original.matrix, original.findings).dump());
    Result<GpuProbeResult> facts = GpuFactsFromJson(doc);
    ASSERT_TRUE(facts.ok()) << facts.status().message();
    RecordedGpuProbe probe(*facts);
    DiscoverOptions options;
    options.gpu_probe = &probe;
    options.use_hwloc = false;
    Topology again = topo::Discover(SysfsRoot(dir.path() / "root"), options);
    LinkMatrix matrix = BuildLinkMatrix(again);
    EXPECT_EQ(RenderJson(again, matrix, RunChecks(again, matrix)).dump(2), RenderJson(original.topology, original.matrix, original.findings).dump(2))
        << name;
  }
}

TEST(Golden, GpuFactsFromJsonRejectsOtherDocuments) {
  EXPECT_FALSE(GpuFactsFromJson(nlohmann::json::object()).ok());
  EXPECT_FALSE(GpuFactsFromJson(nlohmann::json{{"schema_version", 2}}).ok());
  Result<GpuProbeResult> broken = GpuFactsFromJson(nlohmann::json{{"schema_version", 1}, {"gpu_facts", {}}, {"gpus", {{{"name", "x"}}}}});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("not a commlens topo document"), std::string::npos);
}

}  // namespace
}  // namespace commlens::topo
