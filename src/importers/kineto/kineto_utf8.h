// Bytes of a Kineto trace that are not UTF-8 (a kernel name cut mid-character, one
// damaged byte). simdjson refuses a whole text for one such byte, so both readers parse
// the text again with each ill-formed sequence replaced by U+FFFD (common/utf8.h): the
// event keeps its (repaired) name and the rest of the trace loads. Each sequence is
// counted as ImportIssue::kInvalidUtf8 at its offset in the decoded file, so the report
// says where the damage is.
//
// The two readers count the same sequences: the whole-document one those before the end
// of the top-level object, the streaming one those in the keys, values and event runs it
// walks through, which are the same bytes (any other byte before the end is JSON syntax,
// where a bad byte fails the import in both).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8.h"
#include "model/import_stats.h"

namespace commlens::importers {

// Counts |flaws| of |text|, whose first byte is at offset |base| of the decoded file;
// only those starting before |text_end| (an offset into |text|).
inline void CountInvalidUtf8(std::string_view text, const std::vector<Utf8Flaw>& flaws, uint64_t base,
                             model::ImportStats* stats, size_t text_end = SIZE_MAX) {
  for (const Utf8Flaw& f : flaws) {
    if (f.at >= text_end) break;
    stats->Count(model::ImportIssue::kInvalidUtf8, base + f.at,
                 "byte" + std::string(f.length > 1 ? "s " : " ") + FlawBytes(text, f) + " not UTF-8, read as U+FFFD");
  }
}

// For the message of a parse error at |offset| of the decoded file in text that was
// repaired: "; byte N, just before it, is not UTF-8 (0xFF)" when one of |flaws| (of
// |text|, starting at |base|) lies within a token's reach before the error (a bad byte
// outside a string is JSON's syntax broken there); else "".
inline std::string FlawNear(std::string_view text, const std::vector<Utf8Flaw>& flaws, uint64_t base,
                            uint64_t offset) {
  constexpr uint64_t kReach = 64;
  for (auto f = flaws.rbegin(); f != flaws.rend(); ++f) {
    const uint64_t at = base + f->at;
    if (at > offset) continue;
    if (offset - at > kReach) break;
    return "; byte " + std::to_string(at) + ", just before it, is not UTF-8 (" + FlawBytes(text, *f) + ")";
  }
  return {};
}

}  // namespace commlens::importers
