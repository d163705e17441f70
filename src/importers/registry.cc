#include "importers/registry.h"

#include <array>

#include "importers/common/input_file.h"
#include "common/strings.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/nsys/nsys_rep_export.h"
#include "passes/finish.h"
#if COMMLENS_HAS_NATIVE_IMPORT
#include "importers/native/native_importer.h"
#endif

namespace commlens::importers {

namespace {

Result<std::vector<model::RankTrace>> One(Result<model::RankTrace> r) {
  if (!r.ok()) return r.status();
  std::vector<model::RankTrace> v;
  v.push_back(std::move(r).value());
  return v;
}

// Streamed in bounded windows: memory is the model plus a few MB, not the file.
Result<std::vector<model::RankTrace>> ImportKinetoFile(const std::string& path, const ImportOptions& options) {
  KinetoStreamOptions stream;
  stream.drop_host_events = options.drop_host_events;
  return One(StreamKinetoTrace(path, stream));
}
Result<std::vector<model::RankTrace>> ImportNsysFile(const std::string& path, const ImportOptions&) {
  return ImportNsysExport(path);
}
#if COMMLENS_HAS_NATIVE_IMPORT
Result<std::vector<model::RankTrace>> ImportNativeFile(const std::string& path, const ImportOptions&) {
  return One(ImportNativeTrace(path));
}
#endif

// Binary formats first: their magic is exact; the JSON sniff is a guess.
constexpr std::array kImporters = {
#if COMMLENS_HAS_NATIVE_IMPORT
    Importer{"native", "a commlens native trace (.cltrace)", LooksLikeNativeTrace, ImportNativeFile},
#endif
    Importer{"nsys", "an Nsight Systems SQLite export (.sqlite)", LooksLikeSqlite, ImportNsysFile},
    Importer{"kineto", "a Kineto (PyTorch profiler) JSON trace", LooksLikeKinetoTrace, ImportKinetoFile},
};

}  // namespace

std::span<const Importer> Importers() { return kImporters; }

const Importer* FindImporter(std::string_view head) {
  for (const Importer& i : kImporters)
    if (i.sniff(head)) return &i;
  return nullptr;
}

bool LooksLikeTraceFile(const std::string& path) {
  if (EndsWith(path, kNsysReportSuffix)) return true;
  Result<std::string> head = ReadDecodedHead(path, kSniffBytes);
  return !head.ok() || FindImporter(*head) != nullptr;
}

Result<std::vector<model::RankTrace>> ImportFile(const std::string& path, const ImportOptions& options) {
  if (EndsWith(path, kNsysReportSuffix)) {
    COMMLENS_ASSIGN_OR_RETURN(NsysExport exported, ExportNsysReport(path));
    COMMLENS_ASSIGN_OR_RETURN(std::vector<model::RankTrace> ranks, ImportNsysExport(exported.sqlite));
    for (model::RankTrace& r : ranks) {
      r.path = path;
      r.notes.push_back(exported.note);
      passes::FinishRank(&r);
    }
    return ranks;
  }
  COMMLENS_ASSIGN_OR_RETURN(std::string head, ReadDecodedHead(path, kSniffBytes));
  const Importer* importer = FindImporter(head);
  if (!importer) {
    std::string expected;
    for (const Importer& i : kImporters) expected += (expected.empty() ? "" : " or ") + std::string(i.accepts);
    return Error(path + ": not a trace commlens reads: expected " + expected);
  }
  COMMLENS_ASSIGN_OR_RETURN(std::vector<model::RankTrace> ranks, importer->import(path, options));
  for (model::RankTrace& r : ranks) passes::FinishRank(&r);
  return ranks;
}

}  // namespace commlens::importers
