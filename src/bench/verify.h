// Verifiable inputs and exact expected results, shared by the CUDA kernels (which fill
// inputs and count wrong elements) and the CPU tests (which check the same logic).
//
// Every input element is a small non-negative integer drawn from a hash of
// (seed, rank, index). The ranges are chosen per datatype, operator and rank count so
// that every partial result NCCL can form — whatever its reduction order — is an
// integer within the type's exact range (DataTypeInfo::exact_limit):
//   sum:      only m = min(n, L) ranks contribute a non-zero value per element (which
//             ranks rotates with the index), each in [0, K) with m*(K-1) <= L;
//   prod:     values are 1 or 2 and at most m = floor(log2 L) ranks contribute a 2, so
//             every partial product is a power of two <= L;
//   max/min and the data-moving collectives: any value in [0, min(L, 250)].
// Results are then compared exactly (as doubles, which hold every such integer).
//
// Output element j of a rank is described by an ExpectPlan: either the reduction over
// all ranks q of input(q, j + src_offset), or a copy of input(src, i) where
// src = j / chunk, i = j % chunk + src_offset (chunk > 0), or src = src_rank.
//
// This header is C++17 and has no standard-library dependencies beyond <cstdint>,
// because nvcc compiles it into device code.
#pragma once

#include <cstdint>

#include "bench/types.h"

#if defined(__CUDACC__)
#define COMMLENS_HD __host__ __device__
#else
#define COMMLENS_HD
#endif

namespace commlens::bench {

enum class ValueMode : uint8_t { kAny, kSum, kProd };

struct ValueGen {
  uint32_t seed = 0;
  int nranks = 1;
  ValueMode mode = ValueMode::kAny;
  int64_t modulus = 1;  // kAny, kSum: values in [0, modulus)
  int active = 1;       // kSum, kProd: ranks per element that contribute a non-neutral value
};

struct ExpectPlan {
  bool checked = true;  // false: this rank's output is undefined (reduce, non-root)
  bool reduce = false;
  int64_t chunk = 0;
  int src_rank = 0;
  int64_t src_offset = 0;
};

COMMLENS_HD inline uint32_t MixHash(uint32_t seed, int rank, int64_t index) {
  // splitmix64 finalizer over the three inputs; any well-mixed hash would do.
  uint64_t x = (static_cast<uint64_t>(seed) << 32) ^
               (static_cast<uint64_t>(static_cast<uint32_t>(rank)) * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(index) * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<uint32_t>(x);
}

// The input element |index| of rank |rank|.
COMMLENS_HD inline int64_t InputValue(const ValueGen& g, int rank, int64_t index) {
  uint32_t h = MixHash(g.seed, rank, index);
  if (g.mode == ValueMode::kAny) return static_cast<int64_t>(h % static_cast<uint64_t>(g.modulus));
  bool active = (static_cast<int64_t>(rank) + index) % g.nranks < g.active;
  if (g.mode == ValueMode::kSum)
    return active ? static_cast<int64_t>(h % static_cast<uint64_t>(g.modulus)) : 0;
  return (active && ((h >> 7) & 1u)) ? 2 : 1;
}

COMMLENS_HD inline int64_t Combine(RedOp op, int64_t a, int64_t b) {
  switch (op) {
    case RedOp::kProd:
      return a * b;
    case RedOp::kMax:
      return a > b ? a : b;
    case RedOp::kMin:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

// The exact value output element |j| must hold.
COMMLENS_HD inline int64_t ExpectedValue(const ValueGen& g, const ExpectPlan& p, RedOp op,
                                         int64_t j) {
  if (p.reduce) {
    int64_t acc = InputValue(g, 0, j + p.src_offset);
    for (int q = 1; q < g.nranks; ++q) acc = Combine(op, acc, InputValue(g, q, j + p.src_offset));
    return acc;
  }
  if (p.chunk > 0)
    return InputValue(g, static_cast<int>(j / p.chunk), j % p.chunk + p.src_offset);
  return InputValue(g, p.src_rank, j + p.src_offset);
}

// The comparison the check kernel makes, element by element. |got| is the output
// element converted to double (exact for every value the inputs can produce); NaN,
// which the 0xFF poison pattern is in every floating type, never matches.
COMMLENS_HD inline bool Matches(double got, int64_t expected) {
  return got == static_cast<double>(expected);
}

// Host-side reference: the number of wrong elements among |n| output values.
inline int64_t CountWrong(const double* out, int64_t n, const ValueGen& g, const ExpectPlan& p,
                          RedOp op) {
  if (!p.checked) return 0;
  int64_t wrong = 0;
  for (int64_t j = 0; j < n; ++j) wrong += Matches(out[j], ExpectedValue(g, p, op, j)) ? 0 : 1;
  return wrong;
}

// Chooses the input ranges (see the top of this file) for a run of |nranks| ranks.
// |reduces| is false for collectives that only move data.
ValueGen MakeValueGen(DataType type, RedOp op, bool reduces, int nranks, uint32_t seed);

}  // namespace commlens::bench
