// A trace file read front to back in bounded chunks, gunzipped on the fly when it starts
// with the gzip magic (every member of a multi-member file). Memory: one compressed chunk
// (kChunkBytes) plus the gzip decoder's window (gzip_inflater.h), whatever the file's
// size; the decoded bytes go straight into the caller's buffer. Only regular files are read (common/file.h).
//
// Errors name the file: a ".gz" name without the magic, a corrupt stream (with the
// compressed byte offset) or one cut short, as DecodeInput (input_file.h) reports them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens::importers {

class ChunkedSource {
 public:
  static constexpr size_t kChunkBytes = 256 << 10;  // compressed bytes read at a time

  // Opens |path| (a regular file). Nothing is decoded yet.
  [[nodiscard]] static Result<ChunkedSource> Open(const std::string& path);
  // The same over bytes in memory (tests, fuzzer); |bytes| must outlive the source.
  [[nodiscard]] static Result<ChunkedSource> FromMemory(std::string_view bytes, const std::string& name);

  ChunkedSource(ChunkedSource&&) noexcept;
  ChunkedSource& operator=(ChunkedSource&&) = delete;
  ~ChunkedSource();

  // Decodes up to |n| bytes into |out|; fewer only at the end of the data, 0 after it.
  [[nodiscard]] Result<size_t> Read(char* out, size_t n);

  bool gzipped() const;
  uint64_t file_bytes() const;     // on disk (or in memory)
  uint64_t decoded_bytes() const;  // produced so far

 private:
  struct State;
  explicit ChunkedSource(std::unique_ptr<State> state);
  static Result<ChunkedSource> Start(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace commlens::importers
