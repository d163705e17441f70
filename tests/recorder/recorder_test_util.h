// Helpers for the recorder tests: a clean environment per test, a fresh output folder,
// and finding the trace the plugin wrote.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace commlens::testing {

// Sets the recorder's variables for one test and clears them (and any others) after.
class RecorderEnv {
 public:
  RecorderEnv(std::initializer_list<std::pair<const char*, std::string>> vars) {
    Clear();
    for (const auto& [name, value] : vars) setenv(name, value.c_str(), 1);
  }
  ~RecorderEnv() { Clear(); }

 private:
  static void Clear() {
    for (const char* name :
         {"COMMLENS_OUT", "COMMLENS_FLUSH_INTERVAL_MS", "COMMLENS_BUFFER_EVENTS", "COMMLENS_EVENT_MASK",
          "COMMLENS_CAPTURE_AFTER_COLLS", "COMMLENS_CAPTURE_AFTER_S", "COMMLENS_CAPTURE_DURATION_S",
          "COMMLENS_CONTROL", "COMMLENS_CONTROL_POLL_MS", "COMMLENS_FSYNC", "COMMLENS_JOB_ID",
          "COMMLENS_KERNEL_SAMPLE", "COMMLENS_CUPTI", "COMMLENS_CUPTI_LIBRARY", "COMMLENS_LAUNCH_TIMING",
          "COMMLENS_CUDA_DRIVER", "FAKE_CUDA_KERNEL_NS", "FAKE_CUDA_CAPTURING", "FAKE_CUDA_REFUSE", "RANK", "WORLD_SIZE",
          "LOCAL_RANK"})
      unsetenv(name);
  }
};

// An empty folder under the build tree, unique to |name|.
inline std::string FreshDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(COMMLENS_BINARY_DIR) / "test-output" / "recorder" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Writes the recorder's control file (COMMLENS_CONTROL) as a user would: |state| as its
// first byte.
inline void WriteControl(const std::string& path, char state) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  std::fputc(state, f);
  std::fclose(f);
}

// The .cltrace files in |dir|, sorted.
inline std::vector<std::string> TracesIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".cltrace") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace commlens::testing
