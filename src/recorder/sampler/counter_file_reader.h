// One sysfs attribute read again and again: a NIC counter, a link rate. The file is
// opened once and read with pread at offset 0, one system call per reading (sysfs
// renders the text afresh whenever a read starts at offset 0).
//
// A device that goes away shows in two ways: on the live sysfs the read fails (ENODEV,
// the kernel deactivated the attribute); on an ordinary file system, such as a test's
// fake tree, the open file stays readable but loses its last link (Unlinked()). A failed
// read closes the file; the next Read opens the path again, which is how a device that
// comes back is picked up.
//
// Not thread-safe; owned by the sampling thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace commlens::recorder::sampler {

// How the text of an attribute becomes a number.
enum class CounterText : uint8_t {
  kDecimal,   // "123456\n": counters
  kIbRate,    // "100 Gb/sec (4X EDR)": an RDMA port's rate, as bits per second
  kMegabits,  // "25000\n": a netdev's speed in Mb/s, as bits per second; -1 (unknown) fails
};

// The number in |text|; nullopt when it holds none (or, for rates, none above zero).
std::optional<uint64_t> ParseCounterText(std::string_view text, CounterText kind);

class CounterFile {
 public:
  CounterFile(std::string path, CounterText kind) : path_(std::move(path)), kind_(kind) {}
  ~CounterFile() { Close(); }
  CounterFile(CounterFile&& other) noexcept;
  CounterFile& operator=(CounterFile&&) = delete;
  CounterFile(const CounterFile&) = delete;

  // Opens the file if it is closed; false when it cannot be.
  bool Open();
  void Close();
  // The current value. On failure returns false with the errno of the failed call in
  // |error|, or 0 when the file was read but held no number.
  bool Read(uint64_t* value, int* error);
  // True when the open file has lost its last link (its folder was deleted).
  bool Unlinked() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  CounterText kind_;
  int fd_ = -1;
};

}  // namespace commlens::recorder::sampler
