// libFuzzer target: arbitrary bytes through the native trace reader (the recorder's
// format). The reader takes a path, so the bytes go through an in-memory file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/analyze.h"
#include "importers/native/native_importer.h"
#include "passes/finish.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace commlens;
  int fd = memfd_create("native_fuzz", 0);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  auto rank = importers::ImportNativeTrace("/proc/self/fd/" + std::to_string(fd));
  close(fd);
  if (!rank.ok()) return 0;
  model::Trace trace;
  passes::FinishRank(&rank.value());
  trace.ranks.push_back(std::move(rank).value());
  passes::FinishJob(&trace);
  analysis::AnalyzeOptions options;
  options.threads = 1;
  analysis::Analyze(trace, options);
  return 0;
}
