#include "recorder/sampler/counter_file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>

#include "topo/sysfs_root.h"

namespace commlens::recorder::sampler {

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' || text.back() == '\0'))
    text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<uint64_t> ParseCounterText(std::string_view text, CounterText kind) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  switch (kind) {
    case CounterText::kDecimal: {
      uint64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
      return v;
    }
    case CounterText::kIbRate: {
      const double gbps = topo::ParseLeadingNumber(text);  // "100 Gb/sec (4X EDR)" -> 100
      if (!(gbps > 0) || text.find("Gb/sec") == std::string_view::npos) return std::nullopt;
      return static_cast<uint64_t>(std::llround(gbps * 1e9));
    }
    case CounterText::kMegabits: {
      int64_t mbps = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mbps);
      if (ec != std::errc() || end != text.data() + text.size() || mbps <= 0) return std::nullopt;
      return static_cast<uint64_t>(mbps) * 1'000'000;
    }
  }
  return std::nullopt;
}

CounterFile::CounterFile(CounterFile&& other) noexcept
    : path_(std::move(other.path_)), kind_(other.kind_), fd_(other.fd_) {
  other.fd_ = -1;
}

bool CounterFile::Open() {
  if (fd_ >= 0) return true;
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  return fd_ >= 0;
}

void CounterFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool CounterFile::Read(uint64_t* value, int* error) {
  *error = 0;
  if (fd_ < 0 && !Open()) {
    *error = errno;
    return false;
  }
  char buf[64];
  ssize_t n;
  do {
    n = ::pread(fd_, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    *error = errno;
    Close();
    return false;
  }
  std::optional<uint64_t> v = ParseCounterText(std::string_view(buf, static_cast<size_t>(n)), kind_);
  if (!v) return false;
  *value = *v;
  return true;
}

bool CounterFile::Unlinked() const {
  struct stat st;
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_nlink == 0;
}

}  // namespace commlens::recorder::sampler
