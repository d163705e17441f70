#include "common/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace commlens {

Result<TempDir> TempDir::Make(const std::string& parent, const std::string& prefix) {
  std::string templ = (std::filesystem::path(parent.empty() ? "." : parent) / (prefix + "XXXXXX")).string();
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    return Error(parent + ": cannot make a private folder there: " + std::strerror(errno));
  return TempDir(name.data());
}

Result<TempDir> TempDir::MakeInTmp(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  return Make(tmp && *tmp ? tmp : "/tmp", prefix);
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    TempDir old(std::move(*this));
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;  // remove_all does not follow symbolic links inside the folder
  std::filesystem::remove_all(path_, ec);
}

}  // namespace commlens
