#include "common/utf8.h"

#include <algorithm>
#include <cstdio>

namespace commlens {

namespace {

// Bytes |text|[i] starts: a well-formed character's length, or (|*ok| false) the length of
// the maximal subpart of an ill-formed sequence there, at least 1. The second byte's
// range depends on the first (Unicode table 3-7: no overlong forms, no surrogates, nothing
// above U+10FFFF); later ones are 0x80-0xBF.
size_t SequenceAt(std::string_view text, size_t i, bool* ok) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  *ok = true;
  if (b < 0x80) return 1;
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) need = 1;
  else if (b == 0xE0) need = 2, lo = 0xA0;
  else if (b == 0xED) need = 2, hi = 0x9F;
  else if (b >= 0xE1 && b <= 0xEF) need = 2;
  else if (b == 0xF0) need = 3, lo = 0x90;
  else if (b == 0xF4) need = 3, hi = 0x8F;
  else if (b >= 0xF1 && b <= 0xF3) need = 3;
  size_t n = 1;
  for (; n <= need; ++n) {
    if (i + n >= text.size() || byte(i + n) < lo || byte(i + n) > hi) break;
    lo = 0x80, hi = 0xBF;
  }
  *ok = need > 0 && n == need + 1;
  return n;
}

}  // namespace

std::vector<Utf8Flaw> FindUtf8Flaws(std::string_view text) {
  std::vector<Utf8Flaw> flaws;
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    bool ok = false;
    const size_t n = SequenceAt(text, i, &ok);
    if (!ok) flaws.push_back({i, static_cast<uint8_t>(n)});
    i += n;
  }
  return flaws;
}

std::string FlawBytes(std::string_view text, const Utf8Flaw& flaw) {
  std::string s;
  for (size_t k = flaw.at; k < flaw.at + flaw.length && k < text.size(); ++k) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%s0x%02X", s.empty() ? "" : " ", static_cast<unsigned char>(text[k]));
    s += hex;
  }
  return s;
}

Utf8Repair::Utf8Repair(std::string_view text, size_t padding) : flaws_(FindUtf8Flaws(text)) {
  buffer_.reserve(text.size() + 2 * flaws_.size() + padding);
  size_t from = 0;
  for (const Utf8Flaw& f : flaws_) {
    buffer_.append(text.substr(from, f.at - from));
    repaired_at_.push_back(buffer_.size());
    buffer_.append(kReplacement);
    from = f.at + f.length;
  }
  buffer_.append(text.substr(from));
  size_ = buffer_.size();
  buffer_.append(padding, ' ');
}

size_t Utf8Repair::Original(size_t at) const {
  // The last replacement starting at or before |at|.
  const auto next = std::upper_bound(repaired_at_.begin(), repaired_at_.end(), at);
  if (next == repaired_at_.begin()) return at;
  const size_t k = static_cast<size_t>(next - repaired_at_.begin()) - 1;
  const size_t into = at - repaired_at_[k];
  if (into < kReplacement.size()) return flaws_[k].at;
  return flaws_[k].at + flaws_[k].length + (into - kReplacement.size());
}

}  // namespace commlens
