// A small CUDA program for cupti_gpu_test, compiled by nvcc apart from the test (the
// test itself is plain C++ with GoogleTest).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace commlens::recorder::cupti::testing {

int CudaDevices();        // visible GPUs (0 on any error)
std::string InitCuda();   // makes the primary context current; "" or CUDA's error

// What the program did, for the test to find in the recording.
struct SmallProgram {
  int scale_kernels = 0;  // commlens_test_scale launches
  int add_kernels = 0;    // commlens_test_add launches
  int64_t copy_bytes = 0; // each of the two copies (host to device, device to host)
  int64_t set_bytes = 0;  // the one memset
  std::string error;      // "" when every call succeeded
};

// One buffer set, copied in, |launches| times each of two kernels on a stream of its
// own, copied out, synchronized. |on_stream| is told the stream (a cudaStream_t as a
// number) while it exists.
SmallProgram RunSmallProgram(int launches, const std::function<void(uint64_t)>& on_stream = nullptr);

}  // namespace commlens::recorder::cupti::testing
