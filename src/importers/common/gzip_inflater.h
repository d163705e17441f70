// Streaming gzip decoding behind one small interface, with the fastest engine the build
// found: ISA-L's igzip (Debian's libisal, about 3x zlib's speed on x86 traces) or zlib.
// ChunkedSource (chunked_source.h) feeds it compressed chunks and asks for decoded bytes;
// both engines check each member's CRC and length, and decode member after member.
#pragma once

#include <cstddef>
#include <memory>

namespace commlens::importers {

class GzipInflater {
 public:
  struct Step {
    size_t consumed = 0;           // compressed bytes taken from the input
    size_t produced = 0;           // decoded bytes written to the output
    bool member_end = false;       // a gzip member (its trailer checked) ended here
    const char* error = nullptr;   // corrupt data: what the engine says
  };

  GzipInflater();
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  // False when the engine cannot start (out of memory).
  bool ok() const;
  // Decodes from |in| into |out| until one runs out or a member ends. Taking no input and
  // producing nothing means the input ends inside the compressed stream.
  Step Inflate(const char* in, size_t in_len, char* out, size_t out_len);
  // Starts the next member (after member_end).
  void NextMember();

  static const char* Engine();  // "isa-l" or "zlib"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commlens::importers
