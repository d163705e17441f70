// The one way commlens writes an output file: it appears under its final name only when it
// is complete. Every verb's file goes through it (reports, exports, benchmark results).
//
// Writes go to a temporary file beside the target ("<path>.tmp.<pid>") through one
// bounded buffer reused for the whole file (no document in memory); Commit() flushes,
// syncs and renames it onto the final name. A failure at any point (an unwritable folder,
// a full disk) is a Status naming the path and the reason, and the temporary file is
// removed: no half-written file is left under either name. A file that is never
// committed is removed when the object goes away.
//
// A target that exists and is not a regular file (/dev/null, a FIFO, a terminal) is
// written in place: renaming onto it would replace the device with a file. Its write
// errors are still reported by Commit().
//
// With |gzip|, the bytes are compressed on the way (zlib, gzip format); a build without
// zlib (COMMLENS_PORTABLE) refuses gzip at Create().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens {

class GzipDeflater;

class OutputFile {
 public:
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] static Result<std::unique_ptr<OutputFile>> Create(const std::string& path, bool gzip = false);

  // Appends bytes; errors are remembered and reported by Commit() (so a writer's hot
  // loop need not check every call). Once an error is seen, further writes are dropped.
  void Write(std::string_view bytes);
  void Put(char c) {  // one byte, inline (the JSON serializer writes punctuation so)
    if (used_ == kBufferSize) Flush();
    buffer_[used_++] = c;
  }
  // Room for |n| more bytes at the end of the buffer; Advance(k) keeps k of them.
  char* Reserve(size_t n);
  void Advance(size_t n) { used_ += n; }

  [[nodiscard]] Status Commit();
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return written_ + used_; }  // before compression

 private:
  OutputFile(std::string path, std::string target, std::string temp, int fd);
  void Flush();
  void Fail(const std::string& why);
  void WriteRaw(const char* data, size_t n);

  static constexpr size_t kBufferSize = 1 << 20;
  std::string path_;    // as given: errors name it
  std::string target_;  // what the rename replaces: |path_|, or the file a link there names
  std::string temp_;    // "" when the target is written in place
  int fd_ = -1;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;
  std::string error_;
  bool committed_ = false;
  std::unique_ptr<GzipDeflater> deflater_;
};

// Replaces the file at |path| with |text| through an OutputFile; the error names |path|.
[[nodiscard]] Status WriteWholeFile(const std::string& path, std::string_view text);

}  // namespace commlens
