// Kineto writes times as microseconds with up to three decimals ("4396420148166.758").
// A double holds such values only to about a nanosecond, so the importer converts the
// token's text exactly: integer microseconds times 1000 plus the fraction's digits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace commlens::importers {

// Parses a JSON number token in microseconds into nanoseconds. Accepts integers and
// decimals (exact to 3 fraction digits, whole nanoseconds; further digits round by the
// fourth, half away from zero) and falls back to strtod for exponents and for integer
// parts of more than 18 digits. Returns false when the token is not a number.
inline bool MicrosTextToNanos(std::string_view token, int64_t* ns) {
  size_t i = 0;
  bool negative = false;
  if (i < token.size() && token[i] == '-') {
    negative = true;
    ++i;
  }
  size_t int_start = i;
  int64_t whole = 0;
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
    if (i - int_start >= 18) break;  // too long for int64: use strtod
    whole = whole * 10 + (token[i] - '0');
    ++i;
  }
  if (i == int_start) return false;
  int64_t frac_ns = 0;
  bool simple = true;
  if (i < token.size() && token[i] >= '0' && token[i] <= '9') simple = false;  // too long
  if (simple && i < token.size() && token[i] == '.') {
    ++i;
    int digits = 0;
    int64_t scale = 100;  // first fraction digit is hundreds of ns
    bool round_up = false;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      if (digits < 3) {
        frac_ns += (token[i] - '0') * scale;
        scale /= 10;
      } else if (digits == 3) {
        round_up = token[i] >= '5';
      }
      ++digits;
      ++i;
    }
    if (digits == 0) return false;
    if (round_up) ++frac_ns;
  }
  if (simple && i < token.size() && (token[i] == 'e' || token[i] == 'E')) simple = false;
  if (simple && whole > INT64_MAX / 1000 - 1) return false;  // beyond int64 nanoseconds
  if (!simple) {
    std::string copy(token);
    char* end = nullptr;
    double us = std::strtod(copy.c_str(), &end);
    if (end == copy.c_str() || !std::isfinite(us) || std::fabs(us) > 9.2e15) return false;
    *ns = static_cast<int64_t>(std::llround(us * 1000.0));
    return true;
  }
  int64_t value = whole * 1000 + frac_ns;
  *ns = negative ? -value : value;
  return true;
}

}  // namespace commlens::importers
