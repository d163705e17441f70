// What launch_timer_gpu_test runs on the GPU (spin_kernel.cu; nvcc compiles C++17 only);
// CUDA itself is started by cupti_gpu/small_cuda_program.h's InitCuda.
#pragma once

#include <cstdint>
#include <string>

namespace commlens::recorder::launch_timer::testing {

// A stream of the test's own (0 on failure) and the GPU's work on it.
uint64_t NewStream();
// A kernel that spins for about |ns| on the GPU, launched on |stream|.
void LaunchSpin(uint64_t stream, int64_t ns);
bool Synchronize(uint64_t stream);
// Runs |between| while |stream| is being captured into a graph (then discarded).
bool WhileCapturing(uint64_t stream, void (*between)(void*), void* arg);

}  // namespace commlens::recorder::launch_timer::testing
