// The importers commlens has, one entry per input format. Each has a cheap |sniff| on the
// first decoded bytes of a file and an |import| that reads the whole file into its ranks
// (one for a per-rank trace; an Nsight Systems report may hold several processes),
// appending rows only. Adding a format is adding an entry in registry.cc.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::importers {

struct ImportOptions {
  // The rank is for analyze, which drops its host events after the per-rank passes
  // (model/host_events.h): an importer that can leave them out as it reads may (Kineto).
  bool drop_host_events = false;
};

struct Importer {
  std::string_view name;      // "kineto", "native": RankTrace::format
  std::string_view accepts;   // for messages: "a Kineto (PyTorch profiler) JSON trace"
  bool (*sniff)(std::string_view head);
  Result<std::vector<model::RankTrace>> (*import)(const std::string& path, const ImportOptions& options);
};

// Bytes of a file's decoded start that every sniff is given (fewer for a short file).
inline constexpr size_t kSniffBytes = 4096;

std::span<const Importer> Importers();

// The importer whose sniff accepts |head|, or nullptr.
const Importer* FindImporter(std::string_view head);

// Whether the file at |path| is, by its name or its first decoded bytes, a trace of a
// format commlens reads: a .nsys-rep by its name, any other file by the sniffs above. A
// file whose head cannot be read counts as one (its import then says what is wrong).
bool LooksLikeTraceFile(const std::string& path);

// Imports one file of any supported format and runs the per-rank finishing passes on each
// of its ranks. An Nsight Systems report (.nsys-rep) is exported to SQLite first
// (nsys/nsys_rep_export.h).
Result<std::vector<model::RankTrace>> ImportFile(const std::string& path, const ImportOptions& options = {});

}  // namespace commlens::importers
