// Plain binary encoding for moving data between the processes of one job (distributed/,
// analyze --mpi): values raw, strings and columns as a u64 count and their bytes. Both
// ends run the same build on the same kind of machine; the formats that use these
// (model/rank_trace_codec.h, analysis/rank_summary.h) put a magic and a version first, the
// messages of distributed/messages.h do not (they live for one job).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace commlens {

// Counts the bytes (|out| null) or appends them.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}

  void Bytes(const void* p, size_t n) {
    if (out_ && n) out_->insert(out_->end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    size_ += n;
  }
  template <typename T>
  void Pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    Bytes(&v, sizeof v);
  }
  void Count(size_t n) { Pod(static_cast<uint64_t>(n)); }
  void Str(std::string_view s) {
    Count(s.size());
    Bytes(s.data(), s.size());
  }
  template <typename T>
  void Column(const std::vector<T>& c) {
    static_assert(std::is_trivially_copyable_v<T>);
    Count(c.size());
    Bytes(c.data(), c.size() * sizeof(T));
  }
  // One field of a struct: a string, a column, or a plain value (bool as one byte).
  void Field(const std::string& s) { Str(s); }
  template <typename T>
  void Field(const std::vector<T>& c) { Column(c); }
  template <typename T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void Field(T v) { Pod(v); }
  size_t size() const { return size_; }

 private:
  std::vector<uint8_t>* out_;
  size_t size_ = 0;
};

// Reads with bounds checks. The first failure sticks: later reads do nothing, so callers
// check once at the end (or before using a value to size anything).
class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> b, std::string what) : b_(b), what_(std::move(what)) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t left() const { return b_.size() - at_; }
  void Fail(std::string what) {
    if (ok()) error_ = what_ + ": " + what + " at byte " + std::to_string(at_) + " of " +
                       std::to_string(b_.size());
  }

  bool Bytes(void* dst, size_t n) {
    const std::span<const uint8_t> v = View(n);
    if (!ok()) return false;
    if (n) std::memcpy(dst, v.data(), n);
    return true;
  }
  template <typename T>
  T Pod() {
    T v{};
    Bytes(&v, sizeof v);
    return v;
  }
  // A count of items that each take at least |min_bytes|: more than the bytes left could
  // hold is damage, refused before anything is sized by it.
  size_t Count(size_t min_bytes) {
    uint64_t n = Pod<uint64_t>();
    if (ok() && n > left() / min_bytes) {
      Fail("count " + std::to_string(n) + " larger than the buffer");
      return 0;
    }
    return ok() ? static_cast<size_t>(n) : 0;
  }
  // The next |n| bytes, in place (empty after a failure).
  std::span<const uint8_t> View(size_t n) {
    if (!ok()) return {};
    if (n > left()) {
      Fail("truncated (" + std::to_string(n) + " bytes wanted, " + std::to_string(left()) + " left)");
      return {};
    }
    at_ += n;
    return b_.subspan(at_ - n, n);
  }
  std::string Str() {
    std::string s(Count(1), '\0');
    Bytes(s.data(), s.size());
    return s;
  }
  template <typename T>
  void Column(std::vector<T>* c) {
    c->resize(Count(sizeof(T)));
    Bytes(c->data(), c->size() * sizeof(T));
  }
  void Field(std::string* s) { *s = Str(); }
  template <typename T>
  void Field(std::vector<T>* c) { Column(c); }
  void Field(bool* b) {
    uint8_t v = Pod<uint8_t>();
    if (v > 1) Fail("bad flag " + std::to_string(v));
    *b = v == 1;
  }
  template <typename T>
    requires(std::is_arithmetic_v<T> || std::is_enum_v<T>) && (!std::is_same_v<T, bool>)
  void Field(T* v) { *v = Pod<T>(); }

 private:
  std::span<const uint8_t> b_;
  std::string what_;  // what the bytes are, for the error
  size_t at_ = 0;
  std::string error_;
};

}  // namespace commlens
