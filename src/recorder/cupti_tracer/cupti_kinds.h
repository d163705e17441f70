// What the CUPTI tracer asks CUPTI for (COMMLENS_CUPTI_KINDS, `commlens record
// --cupti-kinds`): each kind of activity costs the job its own share, measured on the GPU
// machine (docs/performance.md, "The CUPTI tracer's cost"), so a user can keep only what
// the analysis they want needs. Kernels are always traced: without them the tracer has
// nothing to join the rest to.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/strings.h"

namespace commlens::recorder::cupti {

enum CuptiKind : uint32_t {
  kCuptiKernels = 1u << 0,  // kernels (always)
  kCuptiCopies = 1u << 1,   // memcpy, peer copies
  kCuptiSets = 1u << 2,     // memset
  kCuptiSyncs = 1u << 3,    // stream, event and context synchronizations
  kCuptiNvtx = 1u << 4,     // NVTX ranges and marks (with NVTX injected)
  kCuptiCalls = 1u << 5,    // the CUDA calls that launch, copy, set and wait
};
inline constexpr uint32_t kAllCuptiKinds = kCuptiKernels | kCuptiCopies | kCuptiSets | kCuptiSyncs | kCuptiNvtx | kCuptiCalls;
inline constexpr uint32_t kDefaultCuptiKinds = kAllCuptiKinds & ~kCuptiCalls;  // the calls cost most: opt-in

// "kernel,memcpy,memset,sync,nvtx,api" (any of them, "all", "default"); kernels are
// added whatever the list says. False for an unknown word (|*kinds| untouched).
inline bool ParseCuptiKinds(std::string_view text, uint32_t* kinds) {
  static constexpr NamedBits kWords[] = {{"kernel", kCuptiKernels}, {"memcpy", kCuptiCopies}, {"memset", kCuptiSets},
                                    {"sync", kCuptiSyncs},     {"nvtx", kCuptiNvtx},     {"api", kCuptiCalls},
                                    {"all", kAllCuptiKinds},   {"default", kDefaultCuptiKinds}};
  uint32_t bits = kCuptiKernels;
  if (!ParseNamedBits(text, kWords, &bits)) return false;
  *kinds = bits;
  return true;
}

}  // namespace commlens::recorder::cupti
