// Building blocks of commlens topo: parsers, PCI path classification, NVLink counting.
#include <gtest/gtest.h>

#include "topo/check.h"
#include "topo/cpu_discovery.h"
#include "topo/cpulist.h"
#include "topo/link_matrix.h"
#include "topo/nic_discovery.h"
#include "topo/pci_discovery.h"
#include "topo/sysfs_root.h"

namespace commlens::topo {
namespace {

TEST(CpuList, ParsesAndFormatsRanges) {
  auto cpus = ParseCpuList("96-98,0-2,5\n");
  ASSERT_TRUE(cpus);
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 5, 96, 97, 98}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-2,5,96-98");
  EXPECT_EQ(CanonicalCpuList("3,1,2"), "1-3");
  EXPECT_EQ(CanonicalCpuList(""), "");
  EXPECT_FALSE(ParseCpuList("5-2"));
  EXPECT_FALSE(ParseCpuList("a-b"));
}

TEST(Parse, IntegersAndLeadingNumbers) {
  EXPECT_EQ(ParseInteger("0x030200\n"), 0x030200);
  EXPECT_EQ(ParseInteger(" 42 "), 42);
  EXPECT_EQ(ParseInteger("-1"), -1);
  EXPECT_FALSE(ParseInteger("4x"));
  EXPECT_FALSE(ParseInteger(""));
  EXPECT_DOUBLE_EQ(ParseLeadingNumber("400 Gb/sec (4X NDR)"), 400);
  EXPECT_DOUBLE_EQ(ParseLeadingNumber("16.0 GT/s PCIe"), 16);
  EXPECT_DOUBLE_EQ(ParseLeadingNumber("Unknown"), -1);
  EXPECT_EQ(ParseMemTotal("Node 0 MemTotal:       65794384 kB\nNode 0 MemFree: 1 kB\n"), 65794384ull * 1024);
  EXPECT_FALSE(ParseMemTotal("Node 0 MemFree: 1 kB\n"));
}

TEST(Parse, PciAddresses) {
  EXPECT_TRUE(IsBdf("0000:19:00.0"));
  EXPECT_FALSE(IsBdf("pci0000:16"));
  EXPECT_FALSE(IsBdf("0000:19:00"));
  EXPECT_EQ(NormalizeBdf("00000000:19:00.0"), "0000:19:00.0");
  EXPECT_EQ(NormalizeBdf("0000:AB:1F.7"), "0000:ab:1f.7");
  EXPECT_FALSE(NormalizeBdf("0000:19:00.0x"));
  EXPECT_FALSE(NormalizeBdf("gpu0"));
}

TEST(Parse, StatesAndNaturalOrder) {
  EXPECT_EQ(StripStateCode("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(StripStateCode("7: unspecified"), "unspecified");
  EXPECT_EQ(StripStateCode("LinkUp"), "LinkUp");
  EXPECT_TRUE(NaturalLess("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(NaturalLess("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(NaturalLess("mlx5_31", "mlx5_bond_0"));
  EXPECT_TRUE(NaturalLess("rdmap20s0", "rdmap100s0"));
  EXPECT_FALSE(NaturalLess("mlx5_0", "mlx5_0"));
  EXPECT_TRUE(NaturalLess("mlx5", "mlx5_0"));
}

TEST(PciPath, SplitsHostBridgeAndBridges) {
  PciDevice d;
  d.bdf = "0000:19:00.0";
  ASSERT_TRUE(ParsePciPath("/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:00.0/0000:19:00.0", &d));
  EXPECT_EQ(d.host_bridge, "0000:16");
  EXPECT_EQ(d.bridges, (std::vector<std::string>{"0000:16:01.0", "0000:17:00.0", "0000:18:00.0"}));
  // An Intel VMD domain inside the path is transparent.
  ASSERT_TRUE(ParsePciPath("/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0", &d));
  EXPECT_EQ(d.host_bridge, "0000:00");
  EXPECT_EQ(d.bridges, (std::vector<std::string>{"0000:00:0e.0"}));
  EXPECT_FALSE(ParsePciPath("/sys/devices/virtual/net/lo", &d));
  EXPECT_EQ(NearestPciAncestor("/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"), "0000:00:03.0");
  EXPECT_EQ(NearestPciAncestor("/sys/devices/virtual/net/lo"), "");
}

PciDevice Dev(std::string host_bridge, std::vector<std::string> path, int numa = 0) {
  PciDevice d;
  d.host_bridge = std::move(host_bridge);
  d.bdf = path.back();
  path.pop_back();
  d.bridges = std::move(path);
  d.numa_node = numa;
  return d;
}

TEST(PciLinkType, FollowsNvidiaSmiDefinitions) {
  // One switch (upstream 01:00.0, downstream 02:00.0 / 02:01.0): PIX.
  PciDevice gpu = Dev("0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"});
  PciDevice nic = Dev("0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"});
  EXPECT_EQ(PciLinkType(gpu, nic), LinkType::kPix);
  // Two functions of one card on a root port: PIX.
  EXPECT_EQ(PciLinkType(Dev("0000:00", {"0000:00:02.0", "0000:05:00.0"}), Dev("0000:00", {"0000:00:02.0", "0000:05:00.1"})),
            LinkType::kPix);
  // Two switch levels: a NIC on the inner switch is PIX, one on the outer switch PXB.
  PciDevice inner_gpu = Dev("0000:00", {"0000:00:03.0", "0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0", "0000:09:00.0"});
  PciDevice inner_nic = Dev("0000:00", {"0000:00:03.0", "0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:01.0", "0000:0a:00.0"});
  PciDevice outer_nic = Dev("0000:00", {"0000:00:03.0", "0000:05:00.0", "0000:06:01.0", "0000:0b:00.0"});
  EXPECT_EQ(PciLinkType(inner_gpu, inner_nic), LinkType::kPix);
  EXPECT_EQ(PciLinkType(inner_gpu, outer_nic), LinkType::kPxb);
  EXPECT_EQ(PciLinkType(outer_nic, inner_gpu), LinkType::kPxb);
  // Different root ports of one host bridge: PHB; a device on the root bus too.
  EXPECT_EQ(PciLinkType(gpu, inner_gpu), LinkType::kPhb);
  EXPECT_EQ(PciLinkType(gpu, Dev("0000:00", {"0000:00:1f.6"})), LinkType::kPhb);
  // Different host bridges: NODE within a NUMA node, SYS across.
  PciDevice same_node = Dev("0000:40", {"0000:40:01.0", "0000:41:00.0"}, 0);
  PciDevice other_node = Dev("0000:80", {"0000:80:01.0", "0000:81:00.0"}, 1);
  EXPECT_EQ(PciLinkType(gpu, same_node), LinkType::kNode);
  EXPECT_EQ(PciLinkType(gpu, other_node), LinkType::kSys);
  // Unknown NUMA nodes on both sides (one-socket machines) count as one node.
  EXPECT_EQ(PciLinkType(Dev("0000:00", {"0000:00:01.0", "0000:01:00.0"}, -1), Dev("0000:40", {"0000:40:01.0", "0000:41:00.0"}, -1)),
            LinkType::kNode);
}

TEST(LinkLabel, RoundTrips) {
  for (Link link : {Link{LinkType::kSelf}, Link{LinkType::kNvLink, 18}, Link{LinkType::kPix}, Link{LinkType::kPxb},
                    Link{LinkType::kPhb}, Link{LinkType::kNode}, Link{LinkType::kSys}}) {
    auto back = LinkFromLabel(LinkLabel(link));
    ASSERT_TRUE(back) << LinkLabel(link);
    EXPECT_EQ(back->type, link.type);
    EXPECT_EQ(back->nvlinks, link.nvlinks);
  }
  EXPECT_EQ(LinkLabel({LinkType::kNvLink, 6}), "NV6");
  EXPECT_FALSE(LinkFromLabel("NV"));
  EXPECT_FALSE(LinkFromLabel("PCI"));
}

TEST(NvLinkCount, DirectLinksAndSwitches) {
  Topology t;
  t.gpus.resize(3);
  t.gpus[0].pci.bdf = "0000:01:00.0";
  t.gpus[1].pci.bdf = "0000:02:00.0";
  t.gpus[2].pci.bdf = "0000:03:00.0";
  for (int i = 0; i < 4; ++i) t.gpus[0].nvlinks.push_back({i, true, NvLinkRemote::kGpu, "0000:02:00.0"});
  t.gpus[0].nvlinks.push_back({4, false, NvLinkRemote::kGpu, "0000:02:00.0"});  // inactive: not counted
  for (int i = 0; i < 4; ++i) t.gpus[1].nvlinks.push_back({i, true, NvLinkRemote::kGpu, "0000:01:00.0"});
  EXPECT_EQ(NvLinkCount(t, 0, 1), 4);
  EXPECT_EQ(NvLinkCount(t, 1, 0), 4);
  EXPECT_EQ(NvLinkCount(t, 0, 2), 0);
  // Through NVSwitches: the smaller switch link count of the two.
  for (int i = 0; i < 18; ++i) t.gpus[2].nvlinks.push_back({i, true, NvLinkRemote::kSwitch, ""});
  for (int i = 5; i < 21; ++i) t.gpus[0].nvlinks.push_back({i, true, NvLinkRemote::kSwitch, ""});
  EXPECT_EQ(NvLinkCount(t, 0, 2), 16);
  EXPECT_EQ(NvLinkCount(t, 2, 0), 16);
}

TEST(P2PStatus, CodesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(P2PStatus::kUnknown); ++i) {
    auto status = static_cast<P2PStatus>(i);
    EXPECT_EQ(P2PStatusFromCode(P2PStatusCode(status)), status);
  }
  EXPECT_EQ(P2PStatusCode(P2PStatus::kChipsetNotSupported), "CNS");
  EXPECT_FALSE(P2PStatusFromCode("YES"));
}

TEST(ExitCode, WarningsAndErrorsFail) {
  EXPECT_EQ(ExitCodeFor({}), 0);
  EXPECT_EQ(ExitCodeFor({{Severity::kInfo, "x", "y", {}}}), 0);
  EXPECT_EQ(ExitCodeFor({{Severity::kInfo, "x", "y", {}}, {Severity::kWarning, "x", "y", {}}}), 1);
  EXPECT_EQ(ExitCodeFor({{Severity::kError, "x", "y", {}}}), 1);
}

TEST(SysfsRoot, MissingFilesAreNullopt) {
  SysfsRoot root("/nonexistent-commlens-root");
  EXPECT_FALSE(root.ReadLine("/sys/bus/pci/devices/0000:00:00.0/class"));
  EXPECT_TRUE(root.List("/sys/bus/pci/devices").empty());
  EXPECT_FALSE(root.Resolve("/sys"));
  EXPECT_FALSE(root.IsLiveSystem());
  EXPECT_TRUE(SysfsRoot("/").IsLiveSystem());
}

}  // namespace
}  // namespace commlens::topo
