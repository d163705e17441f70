// Walks the records of a native trace held in memory (format.h), checking each frame.
// It never reads past the buffer: a record cut short by the end of the file is reported
// as kTruncated (the normal state of a file whose writer was killed), a record that
// fails its checksum elsewhere as kCorrupt; reading stops at either.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "native_format/format.h"

namespace commlens::native_format {

struct RecordView {
  uint16_t type = 0;  // a RecordType, or a type this reader does not know
  std::span<const uint8_t> payload;
  uint64_t offset = 0;  // of the record header in the file
};

enum class ReadStatus { kRecord, kEnd, kTruncated, kCorrupt };

// Checks magic, version and header checksum. On failure returns false and says why.
bool ParseFileHeader(std::span<const uint8_t> file, FileHeader* header, std::string* error);

class RecordReader {
 public:
  RecordReader(std::span<const uint8_t> file, uint64_t first_record_offset)
      : file_(file), offset_(first_record_offset) {}

  ReadStatus Next(RecordView* out);
  // Where the next record would start; after kTruncated / kCorrupt, where the bad one does.
  uint64_t offset() const { return offset_; }

 private:
  std::span<const uint8_t> file_;
  uint64_t offset_;
};

// Copies a payload into |out|: a longer payload is cut to sizeof(T) (fields added by a
// later minor version), a shorter one is zero-filled if it has at least MinPayload.
template <typename T>
bool DecodePayload(const RecordView& r, T* out) {
  if (r.payload.size() < MinPayload(static_cast<RecordType>(r.type))) return false;
  std::memset(out, 0, sizeof(T));
  std::memcpy(out, r.payload.data(), r.payload.size() < sizeof(T) ? r.payload.size() : sizeof(T));
  return true;
}

}  // namespace commlens::native_format
