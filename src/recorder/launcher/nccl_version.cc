#include "recorder/launcher/nccl_version.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

namespace commlens::recorder::launcher {

std::string NcclVersionText(int code) {
  int major = 0, minor = 0, patch = 0;
  if (code >= 10000) {
    major = code / 10000;
    minor = code % 10000 / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = code % 1000 / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

NcclLibrary ProbeNccl(const std::string& library) {
  NcclLibrary out;
  void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    out.error = why != nullptr ? why : "dlopen failed";
    return out;
  }
  std::unique_ptr<void, int (*)(void*)> closer(handle, dlclose);
  using GetVersion = int (*)(int*);
  auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  if (get_version == nullptr) {
    out.error = library + " has no ncclGetVersion";
    return out;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(get_version), &info) != 0 && info.dli_fname != nullptr) {
    char* real = realpath(info.dli_fname, nullptr);
    out.path = real != nullptr ? real : info.dli_fname;
    std::free(real);
  } else {
    out.path = library;
  }
  int code = 0;
  if (get_version(&code) != 0 || code <= 0) {
    out.error = out.path + ": ncclGetVersion failed";
    return out;
  }
  out.found = true;
  out.version_code = code;
  return out;
}

}  // namespace commlens::recorder::launcher
