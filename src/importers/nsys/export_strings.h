// The string table of an Nsight Systems export (StringIds): kernel, CUDA API and NVTX
// names are ids into it, and each rank interns the ones it uses into its own pool.
//
// Ids in a real export are 0..n-1, so they index a vector. The file may be crafted and
// use any 64-bit id, so a vector is sized only for ids below 2 x rows + 1024 (the table's
// size, not the ids', bounds the memory); a larger id is kept in a map. Nothing is lost
// either way: every row with an integer id can be looked up.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "model/import_stats.h"
#include "model/string_pool.h"

namespace commlens::importers::nsys {

class Database;

class ExportStrings {
 public:
  // Reads StringIds; a row without an integer id is counted in |stats| and left out.
  [[nodiscard]] Status Load(const Database& db, model::ImportStats* stats);
  // The string, or empty for an unknown id.
  std::string_view Get(int64_t id) const {
    const Span* span = nullptr;
    if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
      span = &dense_[static_cast<size_t>(id)];
    } else if (auto it = sparse_.find(id); it != sparse_.end()) {
      span = &it->second;
    }
    if (!span || !span->present) return {};
    return std::string_view(text_).substr(span->start, span->length);
  }
  // Ids below this index a vector (InternCache sizes its own by it).
  size_t dense_size() const { return dense_.size(); }

 private:
  struct Span {
    uint64_t start = 0;
    uint32_t length = 0;
    bool present = false;
  };
  void Add(int64_t id, std::string_view value);

  std::string text_;
  std::vector<Span> dense_;
  std::unordered_map<int64_t, Span> sparse_;
};

// A rank's pool ids of the export's strings, so that a name used by a million kernels is
// hashed once. A rank caches in a vector of ExportStrings::dense_size() entries when
// |dense|, else in a map: a crafted export with many processes cannot make a vector per
// process of a large table (the importer gives vectors to the first few processes only).
class InternCache {
 public:
  explicit InternCache(bool dense) : dense_(dense) {}
  model::StringId Intern(const ExportStrings& strings, int64_t id, model::StringPool* pool);

 private:
  bool dense_;
  std::vector<uint32_t> by_index_;  // pool id + 1; 0: not yet
  std::unordered_map<int64_t, model::StringId> by_id_;
};

}  // namespace commlens::importers::nsys
