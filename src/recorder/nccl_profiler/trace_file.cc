#include "recorder/nccl_profiler/trace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace commlens::recorder {

namespace {
int Create(const std::string& path) { return open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); }
}  // namespace

int TraceFile::Open(const std::string& path) {
  std::lock_guard<std::mutex> w(write_mu_);
  deferred_path_.clear();
  needed_ = true;
  fd_ = Create(path);
  return fd_ < 0 ? errno : 0;
}

void TraceFile::OpenWhenNeeded(const std::string& path) {
  std::lock_guard<std::mutex> w(write_mu_);
  fd_ = -1;
  deferred_path_ = path;
  needed_ = false;
}

void TraceFile::Needed() { needed_.store(true, std::memory_order_relaxed); }

bool TraceFile::Retarget(const std::string& path) {
  std::lock_guard<std::mutex> w(write_mu_);
  if (deferred_path_.empty()) return false;
  deferred_path_ = path;
  return true;
}

void TraceFile::Queue(const native_format::RecordWriter& w) {
  std::lock_guard<std::mutex> q(queue_mu_);
  queued_.insert(queued_.end(), w.bytes().begin(), w.bytes().end());
}

int TraceFile::Write(bool sync) {
  std::lock_guard<std::mutex> w(write_mu_);
  if (!deferred_path_.empty()) {
    if (!needed_.load(std::memory_order_relaxed)) return 0;  // kept queued
    fd_ = Create(deferred_path_);
    deferred_path_.clear();
    if (fd_ < 0) {
      const int error = errno;
      std::lock_guard<std::mutex> q(queue_mu_);
      queued_.clear();
      return error;
    }
  }
  {
    std::lock_guard<std::mutex> q(queue_mu_);
    writing_.swap(queued_);  // both keep their capacity: no allocation once warm
  }
  const uint8_t* p = writing_.data();
  size_t left = writing_.size();
  int error = 0;
  while (left > 0 && fd_ >= 0) {
    ssize_t n = write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      close(fd_);
      fd_ = -1;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  writing_.clear();
  if (sync && fd_ >= 0) fdatasync(fd_);
  return error;
}

void TraceFile::Close() {
  std::lock_guard<std::mutex> w(write_mu_);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  deferred_path_.clear();
  std::lock_guard<std::mutex> q(queue_mu_);
  queued_.clear();
}

}  // namespace commlens::recorder
