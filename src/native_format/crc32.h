// CRC-32 as zlib and PNG compute it (IEEE 802.3 polynomial, reflected, initial value and
// final xor 0xFFFFFFFF), so Python's zlib.crc32 checks our records too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commlens::native_format {

// Continues a running CRC: Crc32(b, nb, Crc32(a, na)) == Crc32 of a followed by b.
uint32_t Crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace commlens::native_format
