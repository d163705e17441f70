// A private folder for files a step makes and then drops: made by mkdtemp (a fresh name,
// mode 0700, so no other user can plant or read anything in it) and removed with
// everything in it when the object goes.
#pragma once

#include <string>

#include "common/status.h"

namespace commlens {

class TempDir {
 public:
  // A new folder |prefix|XXXXXX inside |parent|; fails, naming |parent|, when it cannot be
  // made there (a read-only or missing folder).
  [[nodiscard]] static Result<TempDir> Make(const std::string& parent, const std::string& prefix);
  // A new folder in $TMPDIR (else /tmp).
  [[nodiscard]] static Result<TempDir> MakeInTmp(const std::string& prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&& other) noexcept;
  ~TempDir();

  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace commlens
