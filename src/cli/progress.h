// A progress line on stderr while a job loads (files and bytes done, rate, time left),
// drawn only when stderr is a terminal and the user did not ask for quiet; nothing
// otherwise, so logs and pipes stay clean. Redrawn from its own thread every 200 ms and
// erased when the object goes away.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "importers/trace_loader.h"

namespace commlens::cli {

class ProgressLine {
 public:
  ProgressLine(const importers::LoadProgress* progress, bool quiet);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The line for these counts after |seconds| (public for tests).
  static std::string Render(uint64_t files_done, uint64_t files_total, uint64_t bytes_read, uint64_t bytes_total,
                            double seconds);

 private:
  void Run();

  const importers::LoadProgress* progress_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace commlens::cli
