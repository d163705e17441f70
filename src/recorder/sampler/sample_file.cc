#include "recorder/sampler/sample_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recorder/nccl_profiler/clock.h"

namespace commlens::recorder::sampler {

Result<std::unique_ptr<SampleFile>> SampleFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(path + ": cannot create the samples file: " + std::strerror(errno));
  std::unique_ptr<SampleFile> file(new SampleFile(fd));
  file->thread_ = std::thread([f = file.get()] { f->Run(); });
  return file;
}

SampleFile::SampleFile(int fd) : fd_(fd) {}

SampleFile::~SampleFile() {
  if (thread_.joinable()) {
    std::vector<uint8_t> nothing;
    Finish(&nothing);
  }
}

bool SampleFile::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return !has_pending_ && !busy_;
}

bool SampleFile::TryHandOver(std::vector<uint8_t>* bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (has_pending_ || busy_) return false;
  pending_.swap(*bytes);  // |bytes| gets the emptied buffer of an earlier hand-over
  has_pending_ = true;
  cv_.notify_all();
  return true;
}

void SampleFile::Finish(std::vector<uint8_t>* last) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !has_pending_ && !busy_; });
    pending_.swap(*last);
    has_pending_ = true;
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void SampleFile::Write(const std::vector<uint8_t>& bytes) {
  const uint8_t* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0 && fd_ >= 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_.store(n < 0 ? errno : EIO);
      ::close(fd_);
      fd_ = -1;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
    bytes_written_.fetch_add(static_cast<uint64_t>(n));
  }
}

void SampleFile::Run() {
  std::vector<uint8_t> writing;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return has_pending_ || stop_; });
    if (!has_pending_) break;  // stop_, and nothing left
    writing.swap(pending_);
    has_pending_ = false;
    busy_ = true;
    lock.unlock();
    Write(writing);
    writing.clear();
    cpu_ns_.store(static_cast<uint64_t>(ReadClockNs(CLOCK_THREAD_CPUTIME_ID)));
    lock.lock();
    pending_.swap(writing);  // |pending_| was empty (busy_ refused hand-overs): keep the capacity
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace commlens::recorder::sampler
