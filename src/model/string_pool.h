// Interned strings for one rank's trace. Rows hold a 32-bit |StringId|; the text lives
// once in the pool. Id 0 is the empty string. Strings are stored in fixed blocks that
// never move, so the views handed out stay valid for the pool's life.
//
// Threading: a pool belongs to one importer thread; reads after import are free.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace commlens::model {

struct StringId {
  uint32_t value = 0;
  friend bool operator==(StringId a, StringId b) { return a.value == b.value; }
  friend bool operator<(StringId a, StringId b) { return a.value < b.value; }
};

class StringPool {
 public:
  StringPool() : StringPool(kBlockSize) {}
  // Blocks of |block_bytes| (a pool built once, from strings of known total size, takes
  // one block of that size instead of a megabyte).
  explicit StringPool(size_t block_bytes);
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;

  StringId Intern(std::string_view s);
  std::string_view Get(StringId id) const { return views_[id.value]; }
  // Returns the id of |s| if it was interned, else the empty id with |found| false.
  StringId Find(std::string_view s, bool* found) const;
  size_t size() const { return views_.size(); }
  size_t bytes() const;

 private:
  static constexpr size_t kBlockSize = 1 << 20;
  std::string_view Store(std::string_view s);

  size_t block_size_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // small strings, packed; the last one fills
  std::vector<std::unique_ptr<char[]>> large_;   // one block per large string
  size_t block_used_;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, uint32_t> index_;
};

}  // namespace commlens::model
