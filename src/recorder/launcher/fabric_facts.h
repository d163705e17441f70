// FabricFacts of the live machine (or of a sysfs snapshot): the folders shared libraries
// are found in, the RDMA devices, NCCL's version and the nvidia_peermem module.
#pragma once

#include <string>
#include <vector>

#include "recorder/launcher/environment.h"
#include "recorder/launcher/fabric_preset.h"

namespace commlens::recorder::launcher {

struct FactsOptions {
  std::string sysfs_root = "/";            // RDMA devices and kernel modules are read below it
  std::string nccl_library = kNcclSoname;  // what ProbeNccl loads; empty: NCCL is not looked for
};

// Library folders, in the dynamic linker's order: LD_LIBRARY_PATH of |env|, the folders
// of /etc/ld.so.conf (and the files it includes), the default folders; then where the
// AWS EFA installer puts aws-ofi-nccl and libfabric (/opt/amazon/...), which are often
// only in a launch script's LD_LIBRARY_PATH. Folders that do not exist are left out.
std::vector<std::string> LibraryDirs(const Environment& env, const std::string& etc_root = "/");

FabricFacts GatherFabricFacts(const Environment& env, const FactsOptions& options);

}  // namespace commlens::recorder::launcher
