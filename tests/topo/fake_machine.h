// Fake machines for the topo tests: a compact text spec (tests/topo/data/*.spec) turned
// into a sysfs tree with the real layout in a temporary folder, plus the GPU facts the
// tests hand to discovery through a RecordedGpuProbe (topo/gpu_facts_json.h) in place
// of NVML and CUDA.
//
// Spec lines (a keyword, then key=value tokens; values with blanks in double quotes;
// '#' starts a comment):
//   numa <id> cpus=<list> mem_kb=<n>
//   host_bridge <dddd:bb> numa=<id>
//     <bdf> <bridge|gpu|nic|nvme|nvswitch|other> [class= vendor= device= driver=
//           numa= cpus= speed= width= max_speed= max_width=]
//     (two blanks of indentation per level: a device's parent is the line above it
//      with one level less)
//   infiniband <name> pci=<bdf> [node_type= state= phys_state= rate= link_layer=]
//   net <name> [pci=<bdf>] [type= operstate= speed=]      (no pci=: a virtual interface)
//   gpu_facts [nvml=yes|no] [cuda=yes|no] [driver=<version>]
//   gpu <bdf> [name= memory_mib= uuid= links=<n>@switch|<n>@<bdf>,... inactive=<n>
//             speed_mbps= version=]
//   p2p default|<bdf> <bdf> read=<code> write=<code> [cuda_access=yes|no]
//     (a pair line sets both directions)
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"
#include "topo/gpu_probe.h"

namespace commlens::topo::testing {

struct FakeMachine {
  std::filesystem::path root;  // the folder that plays "/"
  GpuProbeResult gpu_facts;
};

// Writes the tree for |spec| under |root| (which must not exist yet).
Result<FakeMachine> BuildFakeMachine(const std::string& spec, const std::filesystem::path& root);

// The spec file tests/topo/data/<name>.spec.
std::string ReadSpec(const std::string& name);

// Compares |actual| with tests/topo/data/golden/<file>; with COMMLENS_UPDATE_GOLDENS=1 in
// the environment, rewrites the golden instead and skips the test (testing/golden_file.h).
void ExpectMatchesGolden(const std::string& file, const std::string& actual);

// A fresh, empty temporary folder removed when this object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace commlens::topo::testing
