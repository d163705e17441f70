#include "recorder/sampler/fake_nics.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace commlens::recorder::sampler::testing {

namespace fs = std::filesystem;

namespace {

// One PCI function per device, behind one host bridge.
constexpr const char* kSpec = R"spec(
host_bridge 0000:10 numa=0
  0000:10:01.0 nic class=0x020000 vendor=0x1d0f device=0xefa1 driver=efa
  0000:10:02.0 nic
  0000:10:03.0 nic
  0000:10:04.0 nic vendor=0x15b3 device=0x1003 driver=mlx4_core
  0000:10:05.0 nic class=0x020000 driver=mlx5_core
infiniband rdmap16s27 pci=0000:10:01.0 node_type="7: unspecified" rate="100 Gb/sec (4X EDR)" link_layer=Unknown
infiniband mlx5_0 pci=0000:10:02.0 rate="400 Gb/sec (4X NDR)"
infiniband mlx5_1 pci=0000:10:03.0 rate="200 Gb/sec (4X HDR)" link_layer=Ethernet
infiniband mlx4_0 pci=0000:10:04.0 rate="40 Gb/sec (4X QDR)"
net eth1 pci=0000:10:05.0 speed=100000
net lo type=772
)spec";

const char* const kEfaCounters[] = {
    "tx_bytes", "rx_bytes", "tx_pkts", "rx_pkts", "rx_drops", "send_bytes", "send_wrs", "recv_bytes", "recv_wrs",
    "rdma_read_wrs", "rdma_read_bytes", "rdma_read_wr_err", "rdma_read_resp_bytes", "rdma_write_wrs",
    "rdma_write_bytes", "rdma_write_wr_err", "rdma_write_recv_bytes", "retrans_bytes", "retrans_pkts",
    "retrans_timeout_events", "unresponsive_remote_events", "impaired_remote_conn_events"};
const char* const kPmaExtended[] = {
    "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
    "unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets", "multicast_rcv_packets",
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_xmit_discards",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped"};
const char* const kPmaOld[] = {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
                               "port_xmit_wait", "symbol_error", "link_downed", "port_rcv_errors"};
const char* const kMlx5Hw[] = {"rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer",
                               "out_of_sequence", "duplicate_request", "rnr_nak_retry_err", "packet_seq_err",
                               "local_ack_timeout_err", "np_cnp_sent", "np_ecn_marked_roce_packets",
                               "rp_cnp_handled"};
const char* const kNetCounters[] = {"tx_bytes",  "rx_bytes",  "tx_packets", "rx_packets",
                                    "tx_errors", "rx_errors", "tx_dropped", "rx_dropped"};

}  // namespace

FakeNics::FakeNics() {
  auto machine = topo::testing::BuildFakeMachine(kSpec, root());
  EXPECT_TRUE(machine.ok()) << machine.status().message();
  for (const char* dev : {"rdmap16s27", "mlx5_0", "mlx5_1", "mlx4_0"}) AddRdmaCounters(dev);
  for (const char* dev : {"eth1", "lo"})
    for (const char* c : kNetCounters) Set(Net(dev, c), 0);
}

void FakeNics::AddRdmaCounters(const std::string& dev) {
  if (dev == "rdmap16s27") {
    for (const char* c : kEfaCounters) Set(Efa(c), 0);
    SetText(Efa("lifespan"), "10");
    return;
  }
  if (dev == "mlx4_0") {
    for (const char* c : kPmaOld) Set(Pma(dev, c), 0);
    return;
  }
  for (const char* c : kPmaExtended) Set(Pma(dev, c), 0);
  for (const char* c : kMlx5Hw) Set(Hw(dev, c), 0);
  SetText(Hw(dev, "lifespan"), "10");
}

void FakeNics::SetText(const std::string& path, const std::string& text) {
  // Rewritten in place: an open descriptor sees the new text, as with sysfs.
  const fs::path host = Host(path);
  fs::create_directories(host.parent_path());
  int fd = ::open(host.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << host;
  const std::string line = text + "\n";
  ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  ::close(fd);
}

void FakeNics::Set(const std::string& path, uint64_t value) { SetText(path, std::to_string(value)); }

uint64_t FakeNics::Get(const std::string& path) const {
  std::ifstream in(Host(path));
  uint64_t v = 0;
  in >> v;
  return v;
}

fs::path FakeNics::Saved(const std::string& dev) const {
  return dir_.path() / "saved" / dev;  // inside the temporary folder, outside /sys
}

void FakeNics::Remove(const std::string& dev) {
  const fs::path link = Host("/sys/class/infiniband/" + dev);
  const fs::path target = fs::canonical(link);
  fs::remove_all(Saved(dev));
  fs::create_directories(Saved(dev).parent_path());
  fs::copy(target, Saved(dev), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(target);
  fs::remove(link);
  removed_[dev] = target;
}

void FakeNics::Restore(const std::string& dev) {
  const fs::path target = removed_.at(dev);
  fs::copy(Saved(dev), target, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(Saved(dev));
  const fs::path link = Host("/sys/class/infiniband/" + dev);
  fs::create_symlink(target.lexically_relative(link.parent_path()), link);
  removed_.erase(dev);
  AddRdmaCounters(dev);  // every counter back at zero
}

}  // namespace commlens::recorder::sampler::testing
