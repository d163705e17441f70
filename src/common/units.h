// Durations and byte counts in words, the one way every text commlens writes shows them
// ("812.4 us", "13.42 ms", "64 MiB").
#pragma once

#include <cstdint>
#include <string>

namespace commlens {

// ns below 1 us, then us with one decimal, ms with two, s with three.
std::string FormatDuration(int64_t ns);
// Bytes in the largest binary unit that keeps the value at least 1 (B, KiB, ... TiB),
// whole when exact, else with one decimal.
std::string FormatBytes(int64_t bytes);

}  // namespace commlens
