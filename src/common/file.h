// Reading input files, one way for every reader. Only regular files are read: a FIFO, a
// socket or a device would block or never end, so it is refused with a message that says
// so, before anything waits on it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens {

// Counts the bytes every ReadableFile opened on this thread reads while the object lives
// (progress of a loader: each worker thread scopes its files with the loader's counter).
class ScopedReadCounter {
 public:
  explicit ScopedReadCounter(std::atomic<uint64_t>* counter);
  ~ScopedReadCounter();
  ScopedReadCounter(const ScopedReadCounter&) = delete;
  ScopedReadCounter& operator=(const ScopedReadCounter&) = delete;
  static std::atomic<uint64_t>* Current();

 private:
  std::atomic<uint64_t>* previous_;
};

// An open regular file (closed with the object).
class ReadableFile {
 public:
  ReadableFile(ReadableFile&& other) noexcept : fd_(other.fd_), size_(other.size_), counter_(other.counter_) {
    other.fd_ = -1;
  }
  ReadableFile& operator=(ReadableFile&&) = delete;
  ~ReadableFile();

  // Fails, naming |path|, when it is missing, unreadable or not a regular file.
  [[nodiscard]] static Result<ReadableFile> Open(const std::string& path);

  uint64_t size() const { return size_; }  // at open time
  // Reads up to |n| bytes at the current position; fewer only at the end of the file.
  [[nodiscard]] Result<size_t> Read(char* out, size_t n);

 private:
  ReadableFile(int fd, uint64_t size) : fd_(fd), size_(size), counter_(ScopedReadCounter::Current()) {}
  int fd_;
  uint64_t size_;
  std::atomic<uint64_t>* counter_;  // bytes read are added here, when set
};

// The whole file as a string.
[[nodiscard]] Result<std::string> ReadWholeFile(const std::string& path);
// Its first |n| bytes (fewer when it is shorter).
[[nodiscard]] Result<std::string> ReadFileHead(const std::string& path, size_t n);

}  // namespace commlens
