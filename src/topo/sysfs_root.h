// The one seam between `commlens topo` and the kernel's files: every read of /sys goes
// through a SysfsRoot. The default root is "/"; tests point it at a fake tree built in a
// temporary folder with the real layout (relative symlinks included), and the code under
// test reads it exactly as it reads the live /sys.
//
// Paths given to the methods are absolute paths as seen inside the root
// ("/sys/bus/pci/devices"). Reads never throw; a missing or unreadable file is nullopt,
// because sysfs attributes vanish or fail (EINVAL on the speed of a down link) routinely.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::topo {

class SysfsRoot {
 public:
  explicit SysfsRoot(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  // True when the root is the live system ("/"), so NVML, CUDA and hwloc describe the
  // same machine as the files.
  bool IsLiveSystem() const;

  bool Exists(std::string_view path) const;
  // First line of a file, without the trailing newline and surrounding blanks.
  std::optional<std::string> ReadLine(std::string_view path) const;
  // Whole file (small attribute files only, such as node*/meminfo).
  std::optional<std::string> ReadAll(std::string_view path) const;
  // A decimal integer, or hexadecimal with a 0x prefix ("0x030200").
  std::optional<int64_t> ReadInt(std::string_view path) const;
  // Entry names in a folder, sorted; empty when the folder is missing.
  std::vector<std::string> List(std::string_view dir) const;
  // The canonical path of |path| (symlinks followed), as seen inside the root; nullopt
  // when it does not exist or leads outside the root.
  std::optional<std::string> Resolve(std::string_view path) const;

 private:
  std::filesystem::path HostPath(std::string_view path) const;

  std::filesystem::path root_;
  std::filesystem::path canonical_root_;
};

// Parses "0x10de" or "42" (surrounding blanks allowed); nullopt when not a number.
std::optional<int64_t> ParseInteger(std::string_view text);
// The number a text starts with ("400 Gb/sec (4X NDR)" -> 400, "16.0 GT/s PCIe" -> 16);
// -1 when it starts with none.
double ParseLeadingNumber(std::string_view text);

}  // namespace commlens::topo
