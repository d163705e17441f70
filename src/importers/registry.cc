#include "importers/registry.h"

#include <array>

#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "passes/finish.h"
#if COMMLENS_HAS_NATIVE_IMPORT
#include "importers/native/native_importer.h"
#endif

namespace commlens::importers {

namespace {

// Streamed in bounded windows: memory is the model plus a few MB, not the file.
Result<model::RankTrace> ImportKinetoFile(const std::string& path) { return StreamKinetoTrace(path); }

// Binary formats first: their magic is exact; the JSON sniff is a guess.
constexpr std::array kImporters = {
#if COMMLENS_HAS_NATIVE_IMPORT
    Importer{"native", "a commlens native trace (.cltrace)", LooksLikeNativeTrace, ImportNativeTrace},
#endif
    Importer{"kineto", "a Kineto (PyTorch profiler) JSON trace", LooksLikeKinetoTrace, ImportKinetoFile},
};

}  // namespace

std::span<const Importer> Importers() { return kImporters; }

const Importer* FindImporter(std::string_view head) {
  for (const Importer& i : kImporters)
    if (i.sniff(head)) return &i;
  return nullptr;
}

Result<model::RankTrace> ImportFile(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(std::string head, ReadDecodedHead(path, kSniffBytes));
  const Importer* importer = FindImporter(head);
  if (!importer) {
    std::string expected;
    for (const Importer& i : kImporters) expected += (expected.empty() ? "" : " or ") + std::string(i.accepts);
    return Error(path + ": not a trace commlens reads: expected " + expected);
  }
  COMMLENS_ASSIGN_OR_RETURN(model::RankTrace rank, importer->import(path));
  passes::FinishRank(&rank);
  return rank;
}

}  // namespace commlens::importers
