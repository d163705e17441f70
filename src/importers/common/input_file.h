// Reads a whole trace file into memory, gunzipping it when it starts with the gzip magic,
// and leaves the padding that simdjson's parsers need after the data. Only regular files
// are read (common/file.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens::importers {

class InputBuffer {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING

  InputBuffer() = default;
  InputBuffer(std::unique_ptr<char[]> data, size_t size, size_t capacity)
      : data_(std::move(data)), size_(size), capacity_(capacity) {}

  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }  // size + padding, at least
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct InputFile {
  InputBuffer buffer;
  bool gzipped = false;
  size_t file_bytes = 0;  // on disk
};

// Fails with a message naming |path| when the file cannot be read, a ".gz" file is not
// gzip, or the gzip stream is corrupt or cut short (with the compressed byte offset).
Result<InputFile> ReadInputFile(const std::string& path);

// Same, from memory (used by the fuzzer and tests); |name| is used in messages.
Result<InputFile> DecodeInput(std::string_view bytes, const std::string& name);

// The first (up to) |n| decoded bytes of a file, for format sniffing: gunzipped when it
// starts with the gzip magic. Fails as ReadInputFile does for a file it cannot open or a
// ".gz" file that is not gzip.
Result<std::string> ReadDecodedHead(const std::string& path, size_t n);

}  // namespace commlens::importers
