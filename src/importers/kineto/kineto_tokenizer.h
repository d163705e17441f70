// Finds where JSON values end in a window of a Kineto trace without parsing them: the
// tokenizer stage of the streaming importer (kineto_stream_importer.cc). Two scanners:
//
// - |EventScanner| walks the body of the "traceEvents" array 64 bytes at a time with
//   vector compares: a bitmask of quotes (less the escaped ones), of opening ({ [) and
//   closing (} ]) brackets, and of the bytes inside strings (a prefix XOR of the quote
//   mask, carried from block to block). Brackets outside strings move a depth counter;
//   each return to depth 0 ends one array element (a "cut"), depth -1 is the array's
//   closing bracket. It resumes where it stopped, so a window is scanned once.
// - |ScanValue| is a plain byte loop for the few small values outside the array
//   (distributedInfo, deviceProperties, ...) and for object keys.
//
// Neither validates JSON: simdjson parses every byte between two cuts afterwards, and
// reports what is wrong there. Both are string- and escape-aware, so a bracket inside a
// string never counts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commlens::importers {

inline constexpr size_t kNotFound = SIZE_MAX;

class EventScanner {
 public:
  // Starts just after the array's '[' at |pos|.
  explicit EventScanner(size_t pos) : pos_(pos) {}

  // Scans |data|[pos(), |end|): whole 64-byte blocks only, unless |at_end| (the data ends
  // at |end|), when the last partial block is scanned too. Stops at the array's end.
  // |data| must be readable for 64 bytes past |end|.
  void Scan(const char* data, size_t end, bool at_end);

  size_t pos() const { return pos_; }         // next byte to scan
  size_t last_cut() const { return cut_; }    // just after the last complete element, or kNotFound
  size_t array_end() const { return close_; } // the array's ']', or kNotFound
  bool in_string() const { return in_string_ != 0; }

  // Every position moves down by |by| (the window's bytes moved to its start).
  void Shift(size_t by);
  // Leaves the byte at |at| (< pos() is allowed) out of the scan: for a byte at depth 0
  // the caller rewrote.
  void SkipTo(size_t at) {
    if (pos_ < at) pos_ = at;
  }
  void ForgetCut() { cut_ = kNotFound; }

  // Tests: scan with the portable (SSE2) classifier even where AVX2 is there, so both
  // paths are checked on one machine. Process-wide; off by default.
  static void UsePortableOnly(bool on);

 private:
  // Scan with the block classifier |Classifier| (kineto_tokenizer.cc): one instance for
  // any x86-64 (SSE2), one for AVX2 machines, chosen once at run time.
  template <class Classifier>
  void ScanBlocks(const char* data, size_t end, bool at_end);
  void ScanAvx2(const char* data, size_t end, bool at_end);
  void ScanPortable(const char* data, size_t end, bool at_end);

  size_t pos_;
  size_t cut_ = kNotFound;
  size_t close_ = kNotFound;
  int64_t depth_ = 0;
  uint64_t in_string_ = 0;  // all ones when the last block ended inside a string
  bool escape_carry_ = false;  // the last block ended in an unescaped backslash
};

// Where the JSON value starting at |data|[|from|] ends (one past it), or kNotFound when
// |end| comes first; then |*open_quote| is the opening quote of the string it ended in, or
// kNotFound. A scalar (number, true, ...) ends at the first delimiter: at |end| it is
// reported as not found.
size_t ScanValue(const char* data, size_t from, size_t end, size_t* open_quote);

// The opening quote of the string left open at |end|, scanning from |from| (outside any
// string). kNotFound when no string is open.
size_t UnclosedStringStart(const char* data, size_t from, size_t end);

}  // namespace commlens::importers
