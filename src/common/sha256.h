// SHA-256 (FIPS 180-4). The HTML report names each of its inline scripts by this hash in
// its Content-Security-Policy, so the browser runs those scripts and nothing else; no
// library this project links offers it, and it is short.
//
// Streaming: Update() any number of times, then Digest() once. Not for secrets (no
// constant-time care is needed to hash a page we wrote).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace commlens {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::string_view bytes);
  // The hash of everything given; the object is spent afterwards.
  Digest Finish();

  static Digest Of(std::string_view bytes) {
    Sha256 h;
    h.Update(bytes);
    return h.Finish();
  }

 private:
  void Compress(const uint8_t* block);  // one 64-byte block into state_

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};
  size_t used_ = 0;     // bytes waiting in block_
  uint64_t length_ = 0; // bytes given, in total
};

}  // namespace commlens
