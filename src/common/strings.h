// Small string helpers shared by every component, the NCCL profiler plugin included
// (header only, nothing to link): one copy, not one per file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commlens {

constexpr bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A hash that lets a map keyed by std::string be searched with a std::string_view (with
// std::equal_to<>): no string built per lookup.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// |s| in at most |n| bytes (n >= 3): cut at a character boundary (UTF-8) and ended with
// "..." when it is longer.
inline std::string Shortened(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t end = n - 3;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "...";
}

// A word of a comma-separated list of settings and the bits it stands for.
struct NamedBits {
  std::string_view name;
  uint32_t bits;
};

// The bits a comma-separated list of |table|'s words names, ORed into |*bits| (empty items
// skipped: "a,,b"). False at an unknown word, |*bits| then left as it was.
inline bool ParseNamedBits(std::string_view text, std::span<const NamedBits> table, uint32_t* bits) {
  uint32_t out = *bits;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view word = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (word.empty()) continue;
    bool known = false;
    for (const NamedBits& w : table)
      if (w.name == word) out |= w.bits, known = true;
    if (!known) return false;
  }
  *bits = out;
  return true;
}

// Sorted whole numbers (ranks, steps) as a person writes them: "4-63", "0, 2, 5-7". Once
// the text is longer than |max_chars| and numbers remain, ", ..." ends it.
template <typename T>
std::string NumberRanges(const std::vector<T>& sorted, size_t max_chars = std::string::npos) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(sorted[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(sorted[j]);
    }
    i = j + 1;
    if (out.size() > max_chars && i < sorted.size()) return out + ", ...";
  }
  return out;
}

}  // namespace commlens
