// Builds native-trace bytes in memory: the file header and framed, checksummed records
// (format.h). The recorder fills one per flush and writes it with a single write(2), so
// the file only ever grows by whole records.
//
// Not thread-safe; not for hot paths (it may allocate).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "native_format/format.h"

namespace commlens::native_format {

class RecordWriter {
 public:
  void AppendFileHeader();
  void Append(RecordType type, const void* payload, uint32_t size);
  // A record whose payload is |head| then |body| (a fixed header and its array).
  void Append(RecordType type, const void* head, uint32_t head_size, const void* body, uint32_t body_size);
  template <typename T>
  void Append(RecordType type, const T& payload) {
    Append(type, &payload, static_cast<uint32_t>(sizeof(T)));
  }
  // A string record; text longer than the format allows is cut.
  void AppendString(uint32_t id, std::string_view text);
  // The records |other| holds (whole, framed), after these.
  void AppendRecords(const RecordWriter& other) { buf_.insert(buf_.end(), other.buf_.begin(), other.buf_.end()); }

  const std::vector<uint8_t>& bytes() const { return buf_; }
  size_t size() const { return buf_.size(); }
  bool empty() const { return buf_.empty(); }
  void Clear() { buf_.clear(); }
  // Exchanges the bytes with |other| (both keep their capacity: no allocation once warm).
  void SwapBytes(std::vector<uint8_t>* other) { buf_.swap(*other); }

 private:
  std::vector<uint8_t> buf_;
};

}  // namespace commlens::native_format
