// --check finds faults planted in the 4-GPU node's spec, and nothing on the healthy one.
#include <gtest/gtest.h>

#include <algorithm>

#include "topo/discover.h"
#include "topo/check.h"
#include "topo/fake_machine.h"
#include "topo/gpu_facts_json.h"
#include "topo/link_matrix.h"

namespace commlens::topo {
namespace {

using testing::TempDir;

// Replaces the one occurrence of |from| in |spec| (the test fails when there is none).
std::string Plant(std::string spec, const std::string& from, const std::string& to) {
  size_t at = spec.find(from);
  EXPECT_NE(at, std::string::npos) << "spec has no '" << from << "'";
  if (at != std::string::npos) spec.replace(at, from.size(), to);
  return spec;
}

std::vector<Finding> Check(const std::string& spec) {
  TempDir dir;
  auto machine = testing::BuildFakeMachine(spec, dir.path() / "root");
  EXPECT_TRUE(machine.ok()) << machine.status().message();
  RecordedGpuProbe probe(machine->gpu_facts);
  DiscoverOptions options;
  options.gpu_probe = &probe;
  options.use_hwloc = false;
  Topology topology = Discover(SysfsRoot(machine->root), options);
  return RunChecks(topology, BuildLinkMatrix(topology));
}

const Finding* Find(const std::vector<Finding>& findings, const std::string& code, const std::string& device) {
  for (const Finding& f : findings) {
    if (f.code == code && std::find(f.devices.begin(), f.devices.end(), device) != f.devices.end()) return &f;
  }
  return nullptr;
}

std::string Codes(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += f.code + "(" + (f.devices.empty() ? "" : f.devices[0]) + ") ";
  return out;
}

TEST(Check, HealthyMachinesHaveNoWarnings) {
  for (const char* name : {"four_gpu_ib", "p5_48xlarge"}) {
    std::vector<Finding> findings = Check(testing::ReadSpec(name));
    EXPECT_EQ(ExitCodeFor(findings), 0) << name << ": " << Codes(findings);
  }
}

TEST(Check, FindsPlantedFaults) {
  std::string spec = testing::ReadSpec("four_gpu_ib");
  spec = Plant(spec, "infiniband mlx5_2 pci=0000:84:00.0", "infiniband mlx5_2 pci=0000:84:00.0 state=\"1: DOWN\" phys_state=\"3: Disabled\"");
  spec = Plant(spec, "infiniband mlx5_1 pci=0000:0a:00.0", "infiniband mlx5_1 pci=0000:0a:00.0 rate=\"200 Gb/sec (4X HDR)\"");
  spec = Plant(spec, "p2p 0000:83:00.0 0000:c3:00.0 read=OK write=OK cuda_access=yes",
               "p2p 0000:83:00.0 0000:c3:00.0 read=DR write=DR cuda_access=no");
  spec = Plant(spec, "        0000:c4:00.0 nic", "        0000:c4:00.0 nic numa=0");
  std::vector<Finding> findings = Check(spec);
  SCOPED_TRACE(Codes(findings));

  const Finding* down = Find(findings, "port_down", "mlx5_2");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->severity, Severity::kWarning);
  EXPECT_EQ(down->message, "mlx5_2 port 1 is DOWN (physical state Disabled)");
  const Finding* slow = Find(findings, "port_rate_degraded", "mlx5_1");
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->message, "mlx5_1 port 1 runs at 200 Gb/sec (4X HDR) while other InfiniBand ports of the same model run at 400 Gb/sec");
  const Finding* p2p = Find(findings, "p2p_disabled_nvlink", "GPU2");
  ASSERT_TRUE(p2p);
  EXPECT_EQ(p2p->severity, Severity::kError);
  EXPECT_EQ(p2p->message,
            "P2P from GPU2 (0000:83:00.0) to GPU3 (0000:c3:00.0) is off although they share NV12: read DR, write DR, "
            "CUDA access no");
  EXPECT_TRUE(Find(findings, "p2p_disabled_nvlink", "GPU3"));
  const Finding* numa = Find(findings, "nic_numa_mismatch", "GPU3");
  ASSERT_TRUE(numa);
  EXPECT_EQ(numa->message, "GPU3 (0000:c3:00.0) is on NUMA node 1 but its nearest NIC mlx5_3 is on NUMA node 0");
  // Nothing else: the faults do not spill over onto healthy devices.
  EXPECT_EQ(findings.size(), 5u);
  EXPECT_EQ(ExitCodeFor(findings), 1);
  // Errors come first.
  EXPECT_EQ(findings.front().severity, Severity::kError);
}

TEST(Check, PortsOfAnotherModelAreNotComparedForSpeed) {
  std::string spec = testing::ReadSpec("four_gpu_ib");
  spec = Plant(spec, "        0000:84:00.0 nic", "        0000:84:00.0 nic device=0x101b");
  spec = Plant(spec, "infiniband mlx5_2 pci=0000:84:00.0", "infiniband mlx5_2 pci=0000:84:00.0 rate=\"200 Gb/sec (4X HDR)\"");
  std::vector<Finding> findings = Check(spec);
  EXPECT_FALSE(Find(findings, "port_rate_degraded", "mlx5_2")) << Codes(findings);
  EXPECT_EQ(ExitCodeFor(findings), 0) << Codes(findings);
}

TEST(Check, GpuWithoutNicOnItsSwitch) {
  std::string spec = testing::ReadSpec("four_gpu_ib");
  spec = Plant(spec, "infiniband mlx5_3 pci=0000:c4:00.0\n", "");
  std::vector<Finding> findings = Check(spec);
  const Finding* f = Find(findings, "gpu_without_nic", "GPU3");
  ASSERT_TRUE(f) << Codes(findings);
  EXPECT_EQ(f->message, "GPU3 (0000:c3:00.0) has no RDMA NIC on its PCIe switch; the nearest is mlx5_2 (NODE)");
  EXPECT_EQ(ExitCodeFor(findings), 1);
}

TEST(Check, NvLinksAndPcieLinks) {
  std::string spec = testing::ReadSpec("four_gpu_ib");
  spec = Plant(spec, "links=12@0000:09:00.0 inactive=6", "links=11@0000:09:00.0 inactive=7");
  spec = Plant(spec, "        0000:83:00.0 gpu device=0x2321", "        0000:83:00.0 gpu device=0x2321 width=8 max_width=16");
  spec = Plant(spec, "        0000:c3:00.0 gpu device=0x2321",
               "        0000:c3:00.0 gpu device=0x2321 speed=\"2.5 GT/s PCIe\" max_speed=\"32.0 GT/s PCIe\"");
  spec = Plant(spec, "        0000:84:00.0 nic", "        0000:84:00.0 nic speed=\"16.0 GT/s PCIe\" max_speed=\"32.0 GT/s PCIe\"");
  std::vector<Finding> findings = Check(spec);
  SCOPED_TRACE(Codes(findings));
  const Finding* nvlink = Find(findings, "nvlink_down", "GPU0");
  ASSERT_TRUE(nvlink);
  EXPECT_EQ(nvlink->message, "GPU0 (0000:03:00.0) has 11 active NVLinks; other NVIDIA H100 NVL GPUs have 12");
  ASSERT_TRUE(Find(findings, "pcie_width_degraded", "0000:83:00.0"));
  const Finding* idle = Find(findings, "pcie_speed_degraded", "0000:c3:00.0");
  ASSERT_TRUE(idle);
  EXPECT_EQ(idle->severity, Severity::kInfo) << "an idle GPU lowers its PCIe speed";
  const Finding* nic = Find(findings, "pcie_speed_degraded", "0000:84:00.0");
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->severity, Severity::kWarning);
}

TEST(Check, NoRdmaNicIsOnlyInformation) {
  std::string spec = testing::ReadSpec("four_gpu_ib");
  for (const char* line : {"infiniband mlx5_0 pci=0000:04:00.0\n", "infiniband mlx5_1 pci=0000:0a:00.0\n",
                           "infiniband mlx5_2 pci=0000:84:00.0\n", "infiniband mlx5_3 pci=0000:c4:00.0\n"}) {
    spec = Plant(spec, line, "");
  }
  std::vector<Finding> findings = Check(spec);
  ASSERT_TRUE(Find(findings, "no_rdma_nic", "") == nullptr);  // it names no device
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.back().code, "no_rdma_nic");
  EXPECT_EQ(ExitCodeFor(findings), 0);
}

}  // namespace
}  // namespace commlens::topo
