// A fake sysfs tree with NICs laid out like real ones, for the sampler tests: the PCI
// devices, /sys/class/infiniband and /sys/class/net links come from topo's fake machine
// (tests/topo/fake_machine.h); this adds the counter files each driver shows.
//
//   rdmap16s27  EFA (Amazon PCI vendor, efa driver, node type "7: unspecified"),
//               ports/1/hw_counters/ only (EFA has no PMA counters/)
//   mlx5_0      mlx5 HCA, InfiniBand port, extended (64-bit) PMA counters + hw_counters
//   mlx5_1      mlx5 HCA, RoCE port (link layer Ethernet), extended PMA + hw_counters
//   mlx4_0      an older HCA without extended counters: 32-bit PMA data counters
//   eth1        an Ethernet interface (statistics/, speed 100000 Mb/s)
//   lo          loopback (virtual, no speed)
//
// Counter files are rewritten in place (same inode), as sysfs values change under an
// open file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "recorder/sampler/sampler.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::sampler::testing {

class FakeNics {
 public:
  FakeNics();
  const std::filesystem::path& root() const { return dir_.path(); }

  // The counter file at |path| inside the root ("/sys/class/net/eth1/statistics/tx_bytes").
  void Set(const std::string& path, uint64_t value);
  void SetText(const std::string& path, const std::string& text);
  uint64_t Get(const std::string& path) const;
  // Paths of common counters.
  static std::string Efa(const std::string& file) { return "/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/" + file; }
  static std::string Pma(const std::string& dev, const std::string& file) {
    return "/sys/class/infiniband/" + dev + "/ports/1/counters/" + file;
  }
  static std::string Hw(const std::string& dev, const std::string& file) {
    return "/sys/class/infiniband/" + dev + "/ports/1/hw_counters/" + file;
  }
  static std::string Net(const std::string& dev, const std::string& file) {
    return "/sys/class/net/" + dev + "/statistics/" + file;
  }

  // Deletes the RDMA device's folder, as a driver unload does; Restore puts it back with
  // every counter at zero (a reloaded driver starts from zero).
  void Remove(const std::string& rdma_device);
  void Restore(const std::string& rdma_device);

 private:
  void AddRdmaCounters(const std::string& dev);
  std::filesystem::path Host(const std::string& path) const { return root() / path.substr(1); }
  std::filesystem::path Saved(const std::string& dev) const;  // where a removed device waits

  topo::testing::TempDir dir_;
  std::map<std::string, std::filesystem::path> removed_;  // device -> its folder
};

// A sampler of |fake|'s devices (no GPUs) on host "node1", job "42", writing to |out|.
inline SamplerOptions FakeSamplerOptions(const FakeNics& fake, const std::string& out) {
  SamplerOptions o;
  o.output_path = out;
  o.hostname = "node1";
  o.job_id = "42";
  o.nic.sysfs_root = fake.root();
  o.gpus = false;
  return o;
}

}  // namespace commlens::recorder::sampler::testing
