#include "model/string_pool.h"

#include <cstring>

namespace commlens::model {

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::Store(std::string_view s) {
  if (s.size() > kBlockSize / 4) {  // large strings get a block of their own
    large_.push_back(std::make_unique_for_overwrite<char[]>(s.size()));
    std::memcpy(large_.back().get(), s.data(), s.size());
    return {large_.back().get(), s.size()};
  }
  if (block_used_ + s.size() > kBlockSize) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockSize));
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
