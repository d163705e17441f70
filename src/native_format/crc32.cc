#include "native_format/crc32.h"

#include <array>

namespace commlens::native_format {

namespace {

// One table entry per byte value: the remainder of that byte shifted through the
// reflected polynomial eight times. Built at compile time.
constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t r = i;
    for (int bit = 0; bit < 8; ++bit) r = (r & 1) ? (r >> 1) ^ 0xEDB88320u : r >> 1;
    table[i] = r;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t r = ~crc;
  for (size_t i = 0; i < size; ++i) r = kTable[(r ^ p[i]) & 0xFF] ^ (r >> 8);
  return ~r;
}

}  // namespace commlens::native_format
