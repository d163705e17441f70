// Bytes of outside text that are not UTF-8 (a name cut mid-character by a recorder, a
// damaged byte in a file): where they are, and the text with each replaced by U+FFFD, the
// way Unicode recommends (each maximal subpart of an ill-formed sequence becomes one
// U+FFFD: "\xE2\x82x" gives two characters, "\xFF\xFF" two U+FFFD).
//
// A reader that meets such bytes keeps the text, repaired, and says where the bad bytes
// were; positions in the repaired text map back to the original's with Original().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commlens {

// One ill-formed sequence: its first byte's offset in the text, and its length (1-3).
struct Utf8Flaw {
  size_t at = 0;
  uint8_t length = 1;
};

// The ill-formed sequences of |text|, in order; empty when it is all UTF-8.
std::vector<Utf8Flaw> FindUtf8Flaws(std::string_view text);

// "0xE2 0x82": the bytes of a flaw of |text|, for messages.
std::string FlawBytes(std::string_view text, const Utf8Flaw& flaw);

class Utf8Repair {
 public:
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

  // |text| with its flaws replaced, then |padding| spaces that are not part of it (for
  // parsers that read past the end).
  explicit Utf8Repair(std::string_view text, size_t padding = 0);

  std::string_view text() const { return {buffer_.data(), size_}; }
  size_t readable() const { return buffer_.size(); }  // the text and its padding
  const std::vector<Utf8Flaw>& flaws() const { return flaws_; }  // offsets in the original
  // The offset in the original text of byte |at| of the repaired one (a byte of a
  // replacement maps to the flaw's first byte).
  size_t Original(size_t at) const;

 private:
  std::string buffer_;  // the repaired text, then the padding
  size_t size_ = 0;
  std::vector<Utf8Flaw> flaws_;
  std::vector<size_t> repaired_at_;  // where each flaw's replacement starts in buffer_
};

}  // namespace commlens
