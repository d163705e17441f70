// Event handles. NCCL treats the handle startEvent returns as opaque: it passes it back
// to stopEvent / recordEventState and, as parentObj, to the start of child events. Ours
// is not a pointer but a token naming a slot:
//
//   bits 63..54  context index + 1 (never 0, so a token is never NULL)
//   bits 53..51  pool (Pool)
//   bits 50..32  slot index in the pool
//   bits 31..0   generation of the slot when it was claimed
//
// A token is also the event's id in the trace (OpRecord::op_id, ...): slots are reused,
// but the generation makes (slot, generation) unique, and children find their parent's
// id in their parentObj even after the parent's slot has been recycled. Decoding checks
// every field against what exists, so a foreign value (a PXN parent from another
// process) is rejected or, at worst, names one of our own slots with a stale generation.
#pragma once

#include <cstdint>

namespace commlens::recorder {

// A kernel phase (ABI v7) has no slot of its own: its handle names its kernel channel's
// slot under the pool code of its phase (kKernelPhase + phase id, 0 to 2).
enum class Pool : uint8_t { kOp = 0, kApi = 1, kKernel = 2, kProxyOp = 3, kProxyStep = 4, kKernelPhase = 5 };
inline constexpr int kNumPools = 8;  // kKernelPhase's three phases take 5, 6 and 7
inline constexpr uint32_t kMaxContexts = 1023;
inline constexpr uint32_t kMaxPoolSlots = 1u << 19;

struct Token {
  uint32_t context = 0;  // registry index
  Pool pool = Pool::kOp;
  uint32_t slot = 0;
  uint32_t generation = 0;
};

inline uint64_t EncodeToken(const Token& t) {
  return (static_cast<uint64_t>(t.context + 1) << 54) | (static_cast<uint64_t>(t.pool) << 51) |
         (static_cast<uint64_t>(t.slot) << 32) | t.generation;
}

// False for NULL and for values no token of ours can have.
inline bool DecodeToken(uint64_t v, Token* t) {
  uint64_t context_plus_one = v >> 54;
  uint64_t pool = (v >> 51) & 0x7;
  if (context_plus_one == 0 || context_plus_one > kMaxContexts || pool >= kNumPools) return false;
  t->context = static_cast<uint32_t>(context_plus_one - 1);
  t->pool = static_cast<Pool>(pool);
  t->slot = static_cast<uint32_t>((v >> 32) & (kMaxPoolSlots - 1));
  t->generation = static_cast<uint32_t>(v);
  return true;
}

inline uint64_t HandleValue(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }
inline void* HandleFromValue(uint64_t v) { return reinterpret_cast<void*>(static_cast<uintptr_t>(v)); }

}  // namespace commlens::recorder
