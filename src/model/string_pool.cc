#include "model/string_pool.h"

#include <algorithm>
#include <cstring>

namespace commlens::model {

StringPool::StringPool(size_t block_bytes) : block_size_(std::max<size_t>(block_bytes, 1)), block_used_(block_size_) {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::Store(std::string_view s) {
  if (s.size() > block_size_ / 4) {  // large strings get a block of their own
    large_.push_back(std::make_unique_for_overwrite<char[]>(s.size()));
    std::memcpy(large_.back().get(), s.data(), s.size());
    return {large_.back().get(), s.size()};
  }
  if (block_used_ + s.size() > block_size_) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return {dst, s.size()};
}

StringId StringPool::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return StringId{it->second};
  std::string_view stored = Store(s);
  uint32_t id = static_cast<uint32_t>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return StringId{id};
}

StringId StringPool::Find(std::string_view s, bool* found) const {
  auto it = index_.find(s);
  *found = it != index_.end();
  return *found ? StringId{it->second} : StringId{};
}

size_t StringPool::bytes() const {
  size_t total = 0;
  for (auto v : views_) total += v.size();
  return total;
}

}  // namespace commlens::model
