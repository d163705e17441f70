#include "bench/gpu/nvshmem_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/errors.h"

namespace commlens::bench::gpu {

namespace {

constexpr const char* kHostLibrary = "libnvshmem_host.so.3";
constexpr const char* kPlugin = "libcommlens_nvshmem.so";

std::string ExecutableDir() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string s(path, static_cast<size_t>(n));
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? "." : s.substr(0, slash);
}

// Tries each candidate in turn; on failure |tried| lists every attempt and its dlerror.
void* OpenFirst(const std::vector<std::string>& candidates, int flags, std::string* tried) {
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), flags)) return h;
    const char* why = dlerror();
    *tried += fmt::format("\n  {}: {}", c, why ? why : "not found");
  }
  return nullptr;
}

Result<const commlens_nvshmem_api*> Load() {
  std::string tried;
  std::vector<std::string> hosts = {kHostLibrary};
  if (const char* home = std::getenv("NVSHMEM_HOME"))
    hosts.push_back(fmt::format("{}/lib/{}", home, kHostLibrary));
  if (!OpenFirst(hosts, RTLD_NOW | RTLD_GLOBAL, &tried))
    return NoGpuError(fmt::format(
        "the nvshmem backend needs NVSHMEM's host library {}, which was not found; put its "
        "folder on LD_LIBRARY_PATH or set NVSHMEM_HOME (pip: <site-packages>/nvidia/nvshmem/"
        "lib). Tried:{}",
        kHostLibrary, tried));
  std::vector<std::string> plugins;
  if (const char* p = std::getenv("COMMLENS_NVSHMEM_PLUGIN")) plugins.push_back(p);
  const std::string dir = ExecutableDir();
  plugins.push_back(fmt::format("{}/{}", dir, kPlugin));
  plugins.push_back(fmt::format("{}/../lib/commlens/{}", dir, kPlugin));
  tried.clear();
  void* plugin = OpenFirst(plugins, RTLD_NOW | RTLD_LOCAL, &tried);
  if (!plugin)
    return NoGpuError(fmt::format(
        "the nvshmem backend's plugin {} was not found: this commlens was built without "
        "NVSHMEM (configure with -DNVSHMEM_HOME=<NVSHMEM folder> to build it), or the plugin "
        "is not beside the executable. Tried:{}",
        kPlugin, tried));
  auto entry = reinterpret_cast<commlens_nvshmem_entry>(dlsym(plugin, "commlens_nvshmem_v1"));
  const commlens_nvshmem_api* api = entry ? entry() : nullptr;
  if (!api || api->abi_version != 1)
    return Error(fmt::format("{} does not export the version 1 table (commlens_nvshmem_v1); "
                             "it belongs to another commlens build",
                             kPlugin));
  return api;
}

}  // namespace

Result<const commlens_nvshmem_api*> LoadNvshmem() {
  static Result<const commlens_nvshmem_api*> loaded = Load();
  return loaded;
}

}  // namespace commlens::bench::gpu
