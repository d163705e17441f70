#include "recorder/launcher/plugin_locator.h"

#include <filesystem>

namespace commlens::recorder::launcher {

namespace fs = std::filesystem;

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

std::vector<std::string> PluginCandidates(const std::string& exe_dir) {
  const fs::path dir(exe_dir);
  std::vector<std::string> out;
  for (const fs::path& sub : {fs::path("."), fs::path("../lib"), fs::path("../lib/commlens"),
                              fs::path("../recorder/nccl_profiler")})
    out.push_back((dir / sub / kPluginFileName).lexically_normal().string());
  return out;
}

Result<std::string> FindProfilerPlugin(const std::string& exe_dir) {
  std::vector<std::string> looked = PluginCandidates(exe_dir);
  for (const std::string& path : looked) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return fs::absolute(path, ec).string();
  }
  std::string where;
  for (const std::string& path : looked) where += "\n  " + path;
  return Error(std::string("the NCCL profiler plugin ") + kPluginFileName +
               " is not installed beside this commlens; looked in:" + where +
               "\nBuild it (ninja nccl_profiler_commlens), name it with --plugin FILE, or record "
               "without it (--no-plugin)");
}

}  // namespace commlens::recorder::launcher
