// Loads a job's traces: expands directories, reads every rank's file in parallel with
// the importer its content calls for (registry.h), resolves rank numbers, runs the job's
// finishing passes (passes/finish.h), and keeps going when one file is bad (unless strict).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::importers {

// How far a load is, for a progress display on another thread.
struct LoadProgress {
  std::atomic<uint64_t> files_total{0};
  std::atomic<uint64_t> bytes_total{0};  // on disk
  std::atomic<uint64_t> files_done{0};
  std::atomic<uint64_t> bytes_read{0};   // on disk, read so far
};

struct LoadOptions {
  bool strict = false;  // any bad file fails the whole load
  int threads = 0;      // 0: one per hardware thread
  model::AlignMode align = model::AlignMode::kAuto;  // clocks across hosts (passes/align_clocks)
  LoadProgress* progress = nullptr;  // updated as files are read, when given
};

// Files in |inputs| (files or directories). Fails only when nothing could be loaded, the
// inputs name nothing, or |strict| and some file failed; otherwise per-file failures are
// in Trace::failures and every usable rank is in Trace::ranks (sorted by rank).
Result<model::Trace> LoadTrace(const std::vector<std::string>& inputs, const LoadOptions& options);

// The trace files a directory holds (sorted by name), or the error saying why none.
Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& inputs);

// Rank number written in a file name ("rank3.json.gz", "rank-12.trace.json"), or -1.
int RankFromFileName(const std::string& path);

}  // namespace commlens::importers
