#include "common/units.h"

#include <fmt/format.h>

#include <cmath>

namespace commlens {

std::string FormatDuration(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (std::abs(v) < 1e3) return fmt::format("{} ns", ns);
  if (std::abs(v) < 1e6) return fmt::format("{:.1f} us", v / 1e3);
  if (std::abs(v) < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::abs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{} {}", static_cast<int64_t>(v), kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace commlens
