#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/gzip_deflater.h"

namespace commlens {

Result<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path, bool gzip) {
  std::unique_ptr<GzipDeflater> deflater;
  if (gzip) {
    Result<std::unique_ptr<GzipDeflater>> d = GzipDeflater::Create();
    if (!d.ok()) return Error(path + ": " + d.status().message());
    deflater = std::move(d).value();
  }
  // A device, FIFO or terminal already there is written as it is (stat follows a link to
  // one); anything else gets a temporary file and the rename. A link to a file is followed,
  // so the link stays and the file it names is replaced.
  struct stat st{};
  const bool in_place = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
  std::string target = path;
  if (struct stat lst{}; !in_place && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      target = resolved;
      std::free(resolved);
    }
  }
  std::string temp = in_place ? std::string() : target + ".tmp." + std::to_string(::getpid());
  const int fd = in_place ? ::open(path.c_str(), O_WRONLY | O_CLOEXEC)
                          : ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(path + ": cannot create: " + std::strerror(errno));
  std::unique_ptr<OutputFile> f(new OutputFile(path, std::move(target), std::move(temp), fd));
  f->deflater_ = std::move(deflater);
  return f;
}

OutputFile::OutputFile(std::string path, std::string target, std::string temp, int fd)
    : path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), fd_(fd), buffer_(std::make_unique_for_overwrite<char[]>(kBufferSize)) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::Fail(const std::string& why) {
  if (error_.empty()) error_ = why;
}

void OutputFile::WriteRaw(const char* data, size_t n) {
  while (n > 0 && error_.empty()) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Fail(std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void OutputFile::Flush() {
  if (used_ == 0) return;
  written_ += used_;
  const std::string_view bytes(buffer_.get(), used_);
  used_ = 0;
  if (!deflater_) return WriteRaw(bytes.data(), bytes.size());
  Status s = deflater_->Deflate(bytes, false, [this](const char* d, size_t n) {
    WriteRaw(d, n);
    return error_.empty();
  });
  if (!s.ok()) Fail(s.message());
}

char* OutputFile::Reserve(size_t n) {
  if (n > kBufferSize) n = kBufferSize;  // callers reserve small records
  if (kBufferSize - used_ < n) Flush();
  return buffer_.get() + used_;
}

void OutputFile::Write(std::string_view bytes) {
  if (!error_.empty()) return;
  while (!bytes.empty()) {
    if (used_ == kBufferSize) Flush();
    size_t n = std::min(bytes.size(), kBufferSize - used_);
    std::memcpy(buffer_.get() + used_, bytes.data(), n);
    used_ += n;
    bytes.remove_prefix(n);
  }
}

Status OutputFile::Commit() {
  Flush();
  if (deflater_ && error_.empty()) {
    Status s = deflater_->Deflate({}, true, [this](const char* d, size_t n) {
      WriteRaw(d, n);
      return error_.empty();
    });
    if (!s.ok()) Fail(s.message());
  }
  // A file is synced before it takes the final name (a crash then leaves the old file or
  // the whole new one); a device written in place has nothing to sync.
  if (error_.empty() && !temp_.empty() && ::fsync(fd_) != 0) Fail(std::strerror(errno));
  if (::close(fd_) != 0) Fail(std::strerror(errno));
  fd_ = -1;
  if (error_.empty() && !temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) Fail(std::strerror(errno));
  if (!error_.empty()) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    return Error(path_ + ": cannot write: " + error_ + (temp_.empty() ? "" : " (nothing left under this name)"));
  }
  committed_ = true;
  return OkStatus();
}

Status WriteWholeFile(const std::string& path, std::string_view text) {
  COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, OutputFile::Create(path));
  out->Write(text);
  return out->Commit();
}

}  // namespace commlens
