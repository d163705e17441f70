// Which NCCL a job will find, and its version: libnccl.so.2 loaded with dlopen (the
// dynamic linker's own search: LD_LIBRARY_PATH, the ld.so cache, the default folders),
// asked with ncclGetVersion, and unloaded. No NCCL at build time.
//
// PyTorch wheels carry their own NCCL (site-packages/nvidia/nccl/lib) found through the
// wheel's RPATH, not the library path: there, name the file (--nccl-lib).
#pragma once

#include <string>

namespace commlens::recorder::launcher {

struct NcclLibrary {
  bool found = false;
  std::string path;      // the file that was loaded
  int version_code = 0;  // as ncclGetVersion gives it: 22809 for 2.28.9
  std::string error;     // why not found, in words
};

inline constexpr const char* kNcclSoname = "libnccl.so.2";

// |library|: a soname searched the dynamic linker's way, or a path.
NcclLibrary ProbeNccl(const std::string& library = kNcclSoname);

// NCCL_VERSION_CODE for a release: 2.28.9 -> 22809 (NCCL 2.9 and later; 2.8 and older
// were major*1000 + minor*100 + patch, which ncclGetVersion still returns for them).
constexpr int NcclVersionCode(int major, int minor, int patch) {
  return major * 10000 + minor * 100 + patch;
}
// "2.28.9" from a code in either scheme.
std::string NcclVersionText(int code);

}  // namespace commlens::recorder::launcher
