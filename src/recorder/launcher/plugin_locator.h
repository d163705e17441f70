// Where the NCCL profiler plugin is: installed beside the commlens executable, or in the
// build tree it was built in. Searched, in order, relative to the folder of the running
// executable (/proc/self/exe, symlinks resolved):
//
//   ./libnccl-profiler-commlens.so                   (copied beside the binary)
//   ../lib/libnccl-profiler-commlens.so              (an install prefix)
//   ../lib/commlens/libnccl-profiler-commlens.so     (`cmake --install`: lib/commlens)
//   ../recorder/nccl_profiler/libnccl-profiler-commlens.so   (the build tree)
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace commlens::recorder::launcher {

inline constexpr const char* kPluginFileName = "libnccl-profiler-commlens.so";

// The folder of the running executable.
std::string ExecutableDir();

// The places searched from |exe_dir|, in order.
std::vector<std::string> PluginCandidates(const std::string& exe_dir);

// The first candidate that is a regular file, as an absolute path; an error naming every
// place looked in when none is.
Result<std::string> FindProfilerPlugin(const std::string& exe_dir);

}  // namespace commlens::recorder::launcher
