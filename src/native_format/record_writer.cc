#include "native_format/record_writer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "native_format/crc32.h"

namespace commlens::native_format {

static_assert(std::endian::native == std::endian::little,
              "the native trace format is little-endian and written by memcpy");

void RecordWriter::AppendFileHeader() {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version_major = kVersionMajor;
  h.version_minor = kVersionMinor;
  h.header_size = sizeof(FileHeader);
  h.crc32 = Crc32(&h, offsetof(FileHeader, crc32));
  const auto* p = reinterpret_cast<const uint8_t*>(&h);
  buf_.insert(buf_.end(), p, p + sizeof(h));
}

void RecordWriter::Append(RecordType type, const void* payload, uint32_t size) {
  Append(type, payload, size, nullptr, 0);
}

void RecordWriter::Append(RecordType type, const void* head, uint32_t head_size, const void* body,
                          uint32_t body_size) {
  const uint32_t size = head_size + body_size;
  RecordHeader h{};
  h.payload_size = size;
  h.type = static_cast<uint16_t>(type);
  size_t at = buf_.size();
  buf_.resize(at + sizeof(h) + size);
  std::memcpy(buf_.data() + at, &h, sizeof(h));
  if (head_size > 0) std::memcpy(buf_.data() + at + sizeof(h), head, head_size);
  if (body_size > 0) std::memcpy(buf_.data() + at + sizeof(h) + head_size, body, body_size);
  // The checksum covers the header after its own field, then the payload.
  uint32_t crc = Crc32(buf_.data() + at + sizeof(uint32_t), sizeof(h) - sizeof(uint32_t) + size);
  std::memcpy(buf_.data() + at, &crc, sizeof(crc));
}

void RecordWriter::AppendString(uint32_t id, std::string_view text) {
  size_t n = std::min<size_t>(text.size(), kMaxPayload - sizeof(uint32_t));
  std::vector<uint8_t> payload(sizeof(uint32_t) + n);
  std::memcpy(payload.data(), &id, sizeof(id));
  if (n > 0) std::memcpy(payload.data() + sizeof(id), text.data(), n);
  Append(RecordType::kString, payload.data(), static_cast<uint32_t>(payload.size()));
}

}  // namespace commlens::native_format
