#include "importers/nsys/export_strings.h"

#include <algorithm>
#include <cstdint>

#include "importers/nsys/sqlite_db.h"

namespace commlens::importers::nsys {

Status ExportStrings::Load(const Database& db, model::ImportStats* stats) {
  COMMLENS_ASSIGN_OR_RETURN(bool has, db.HasTable("StringIds"));
  if (!has) return Error(db.name() + ": the export has no StringIds table (the names of kernels and calls)");
  COMMLENS_ASSIGN_OR_RETURN(Statement count, db.Prepare("SELECT count(*) FROM StringIds"));
  COMMLENS_ASSIGN_OR_RETURN(bool counted, count.Next());
  const uint64_t rows = counted ? static_cast<uint64_t>(std::max<int64_t>(count.Int(0), 0)) : 0;
  const uint64_t dense_limit = 2 * rows + 1024;
  COMMLENS_ASSIGN_OR_RETURN(Statement s, db.Prepare("SELECT id, value FROM StringIds"));
  for (uint64_t n = 0;; ++n) {
    COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
    if (!row) break;
    if (!s.IsInt(0)) {
      stats->Count(model::ImportIssue::kBadRecord, n, "StringIds row whose id is not an integer");
      continue;
    }
    const std::string_view value = s.Text(1);
    if (text_.size() + value.size() > UINT32_MAX) {  // spans hold 32-bit lengths, the text any size
      stats->Count(model::ImportIssue::kBadRecord, n, "StringIds: more than 4 GiB of strings");
      continue;
    }
    const int64_t id = s.Int(0);
    if (id >= 0 && static_cast<uint64_t>(id) < dense_limit && static_cast<uint64_t>(id) >= dense_.size())
      dense_.resize(static_cast<size_t>(id) + 1);
    Add(id, value);
  }
  return OkStatus();
}

void ExportStrings::Add(int64_t id, std::string_view value) {
  const Span span{text_.size(), static_cast<uint32_t>(value.size()), true};
  text_.append(value);
  if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) dense_[static_cast<size_t>(id)] = span;
  else sparse_[id] = span;
}

model::StringId InternCache::Intern(const ExportStrings& strings, int64_t id, model::StringPool* pool) {
  if (dense_ && id >= 0 && static_cast<uint64_t>(id) < strings.dense_size()) {
    if (by_index_.empty()) by_index_.resize(strings.dense_size(), 0);
    uint32_t& slot = by_index_[static_cast<size_t>(id)];
    if (slot == 0) slot = pool->Intern(strings.Get(id)).value + 1;
    return model::StringId{slot - 1};
  }
  auto [it, added] = by_id_.try_emplace(id);
  if (added) it->second = pool->Intern(strings.Get(id));
  return it->second;
}

}  // namespace commlens::importers::nsys
