// Loads a job's traces in two stages: import (every file, in parallel, with the importer
// its content calls for, registry.h, which also runs the per-rank finishing passes) and
// assembly (rank numbers, duplicates, the job's finishing passes, passes/finish.h). It
// keeps going when one file is bad (unless strict). A distributed load (src/distributed/)
// imports the files in several processes and hands them to the same assembly.
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
  // Leave out each rank's host events as it is imported (model/host_events.h): what
  // analyze does, so that thousands of ranks fit; exports keep them.
  bool drop_host_events = false;
  // A job of the nodes' samples files alone (no rank's trace: a recorded job that made
  // no NCCL call) loads, with a warning saying so: analyze reports its counters. Else
  // such a job fails to load like one with nothing in it.
  bool counters_alone = false;
};

// Files in |inputs| (files or directories): ExpandInputs, ImportFiles, AssembleJob. Fails
// only when nothing could be loaded (no rank, and no counters or not |counters_alone|),
// the inputs name nothing, or |strict| and some file failed; otherwise per-file failures
// are in Trace::failures and every usable rank is in Trace::ranks (sorted by rank).
Result<model::Trace> LoadTrace(const std::vector<std::string>& inputs, const LoadOptions& options);

// One input file imported: its ranks, or why it could not be read.
struct ImportedFile {
  std::vector<model::RankTrace> ranks;
  std::string error;  // empty when the file was read

  static ImportedFile From(Result<std::vector<model::RankTrace>> imported);
};

// One file imported as ImportFiles imports it: ImportFile, each rank's |part| set, its
// host events dropped when |options.drop_host_events|.
ImportedFile ImportOneFile(const std::string& path, const LoadOptions& options);

// Imports every file on |options.threads| threads; result i is files[i]'s. Counts into
// |options.progress| when given.
std::vector<ImportedFile> ImportFiles(const std::vector<std::string>& files, const LoadOptions& options);

// The job from its imported files (|imported[i]| read from |files[i]|, the order
// ExpandInputs gives): rank numbers from the trace, else the file name, else the lowest
// free one in file order; a rank claimed twice kept from the first file; the job passes;
// then the strict and nothing-loaded checks of LoadTrace.
Result<model::Trace> AssembleJob(const std::vector<std::string>& files, std::vector<ImportedFile> imported,
                                 const LoadOptions& options);

// The trace files the inputs name: a file is taken as given (one that is not a trace is
// then an error of its import); a directory gives its files with a trace's name whose
// first bytes are a trace of a known format (registry.h's LooksLikeTraceFile), sorted by
// name, the others added to |skipped| when given. Fails when a directory has no trace.
Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& inputs,
                                              std::vector<std::string>* skipped = nullptr);

// The one note on the files ExpandInputs skipped: how many, and the first few names.
std::string SkippedFilesNote(const std::vector<std::string>& skipped);

// Size of an input file on disk, 0 when unknown (progress, and balancing a distributed load).
uint64_t InputFileSize(const std::string& path);

// Rank number written in a file name ("rank3.json.gz", "rank-12.trace.json"), or -1.
int RankFromFileName(const std::string& path);

}  // namespace commlens::importers
