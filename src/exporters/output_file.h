// An output file that appears under its final name only when it is complete.
//
// Writes go to a temporary file beside the target ("<path>.tmp.<pid>") through one
// bounded buffer reused for the whole file (no document in memory); Commit() flushes,
// syncs and renames it onto the final name. A failure at any point (an unwritable folder,
// a full disk) is a Status naming the path and the reason, and the temporary file is
// removed: no half-written file is left under either name. A file that is never
// committed is removed when the object goes away.
//
// With |gzip|, the bytes are compressed on the way (zlib, gzip format).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens::exporters {

class OutputFile {
 public:
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] static Result<std::unique_ptr<OutputFile>> Create(const std::string& path, bool gzip = false);

  // Appends bytes; errors are remembered and reported by Commit() (so a writer's hot
  // loop need not check every call). Once an error is seen, further writes are dropped.
  void Write(std::string_view bytes);
  // Room for |n| more bytes at the end of the buffer; Advance(k) keeps k of them.
  char* Reserve(size_t n);
  void Advance(size_t n) { used_ += n; }

  [[nodiscard]] Status Commit();
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return written_ + used_; }  // before compression

 private:
  OutputFile(std::string path, std::string temp, int fd, bool gzip);
  void Flush();
  void Fail(const std::string& why);
  void WriteRaw(const char* data, size_t n);

  static constexpr size_t kBufferSize = 1 << 20;
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;
  std::string error_;
  bool committed_ = false;
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
};


}  // namespace commlens::exporters
