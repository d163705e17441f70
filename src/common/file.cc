#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace commlens {

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

namespace {
thread_local std::atomic<uint64_t>* current_counter = nullptr;
}

ScopedReadCounter::ScopedReadCounter(std::atomic<uint64_t>* counter) : previous_(current_counter) {
  current_counter = counter;
}
ScopedReadCounter::~ScopedReadCounter() { current_counter = previous_; }
std::atomic<uint64_t>* ScopedReadCounter::Current() { return current_counter; }

ReadableFile::~ReadableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ReadableFile> ReadableFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(path + ": is " + KindOf(st.st_mode) + "; commlens reads regular files only");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return ReadableFile(fd, static_cast<uint64_t>(st.st_size));
}

Result<size_t> ReadableFile::Read(char* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd_, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error(std::string("read error: ") + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  if (counter_) counter_->fetch_add(done, std::memory_order_relaxed);
  return done;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(ReadableFile file, ReadableFile::Open(path));
  std::string text(file.size(), '\0');
  Result<size_t> got = file.Read(text.data(), text.size());
  if (!got.ok()) return Error(path + ": " + got.status().message());
  text.resize(*got);
  return text;
}

Result<std::string> ReadFileHead(const std::string& path, size_t n) {
  COMMLENS_ASSIGN_OR_RETURN(ReadableFile file, ReadableFile::Open(path));
  std::string head(n, '\0');
  Result<size_t> got = file.Read(head.data(), n);
  if (!got.ok()) return Error(path + ": " + got.status().message());
  head.resize(*got);
  return head;
}

}  // namespace commlens
