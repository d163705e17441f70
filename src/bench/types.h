// The datatype and reduction-operator enums of the benchmark. Kept in their own header,
// free of the standard library's heavier parts, because CUDA kernels include it too.
#pragma once

#include <cstdint>

namespace commlens::bench {

// The NCCL datatypes, in NCCL's enum order (ncclInt8 = 0 ... ncclFloat8e5m2 = 11).
enum class DataType : uint8_t {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBfloat16,
  kFp8E4M3,
  kFp8E5M2,
  kCount
};

// NCCL's ncclRedOp_t order for the operators we verify exactly (avg and premulsum are
// not exact in floating point, so they are not offered).
enum class RedOp : uint8_t { kSum, kProd, kMax, kMin, kCount };

}  // namespace commlens::bench
