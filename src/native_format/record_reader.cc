#include "native_format/record_reader.h"

#include <algorithm>
#include <bit>

#include "native_format/crc32.h"

namespace commlens::native_format {

static_assert(std::endian::native == std::endian::little,
              "the native trace format is little-endian and read by memcpy");

bool ParseFileHeader(std::span<const uint8_t> file, FileHeader* header, std::string* error) {
  if (file.size() < sizeof(FileHeader)) {
    *error = "file is shorter than the 32-byte native trace header";
    return false;
  }
  std::memcpy(header, file.data(), sizeof(FileHeader));
  if (std::memcmp(header->magic, kMagic, sizeof(kMagic)) != 0) {
    *error = "not a commlens native trace (bad magic)";
    return false;
  }
  if (header->crc32 != Crc32(file.data(), offsetof(FileHeader, crc32))) {
    *error = "native trace header fails its checksum";
    return false;
  }
  if (header->version_major != kVersionMajor) {
    *error = "native trace version " + std::to_string(header->version_major) + "." +
             std::to_string(header->version_minor) + " is not supported (this reader knows " +
             std::to_string(kVersionMajor) + ".x)";
    return false;
  }
  if (header->header_size < sizeof(FileHeader) || header->header_size > file.size()) {
    *error = "native trace header size " + std::to_string(header->header_size) + " is invalid";
    return false;
  }
  return true;
}

ReadStatus RecordReader::Next(RecordView* out) {
  const uint64_t left = file_.size() - offset_;
  if (left == 0) return ReadStatus::kEnd;
  if (left < sizeof(RecordHeader)) return ReadStatus::kTruncated;
  const uint8_t* at = file_.data() + offset_;
  RecordHeader h;
  std::memcpy(&h, at, sizeof(h));
  // A tail of zeros is what a file system leaves after a crash that lost the last
  // write's data but not the size: it is truncation, not corruption.
  const bool zero_header = std::all_of(at, at + sizeof(h), [](uint8_t b) { return b == 0; });
  if (zero_header) return ReadStatus::kTruncated;
  if (h.payload_size > kMaxPayload) return ReadStatus::kCorrupt;
  if (h.payload_size > left - sizeof(h)) return ReadStatus::kTruncated;
  const uint64_t framed = sizeof(h) - sizeof(uint32_t) + h.payload_size;
  if (Crc32(at + sizeof(uint32_t), framed) != h.crc32) {
    // A bad final record is a torn last write; one followed by more data is corruption.
    bool last = offset_ + sizeof(h) + h.payload_size == file_.size();
    return last ? ReadStatus::kTruncated : ReadStatus::kCorrupt;
  }
  out->type = h.type;
  out->payload = file_.subspan(offset_ + sizeof(h), h.payload_size);
  out->offset = offset_;
  offset_ += sizeof(h) + h.payload_size;
  return ReadStatus::kRecord;
}

}  // namespace commlens::native_format
