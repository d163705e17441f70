// The small CUDA program as a process of its own, for cupti_injection_gpu_test: CUDA
// loads the injection library named in its environment when it initializes.
//   small_program LAUNCHES COUNTS_FILE   runs it; what it did goes to COUNTS_FILE
//   small_program --init-only            initializes CUDA and runs nothing
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "small_cuda_program.h"

int main(int argc, char** argv) {
  namespace t = commlens::recorder::cupti::testing;
  if (argc == 2 && std::strcmp(argv[1], "--init-only") == 0) {
    const std::string error = t::InitCuda();
    if (!error.empty()) std::fprintf(stderr, "small_program: %s\n", error.c_str());
    return error.empty() ? 0 : 1;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: small_program LAUNCHES COUNTS_FILE | --init-only\n");
    return 64;
  }
  const t::SmallProgram p = t::RunSmallProgram(std::atoi(argv[1]));
  if (!p.error.empty()) {
    std::fprintf(stderr, "small_program: %s\n", p.error.c_str());
    return 1;
  }
  FILE* f = std::fopen(argv[2], "w");
  if (f == nullptr) return 2;
  std::fprintf(f, "%d %d %lld %lld\n", p.scale_kernels, p.add_kernels, static_cast<long long>(p.copy_bytes),
               static_cast<long long>(p.set_bytes));
  return std::fclose(f) == 0 ? 0 : 2;
}
