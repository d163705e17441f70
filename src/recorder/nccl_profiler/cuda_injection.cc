// CUDA's injection entry point. With CUDA_INJECTION64_PATH naming this plugin, CUDA loads
// it into every process that initializes CUDA and calls InitializeInjection from cuInit.
// `commlens record --cupti` sets it, so that the CUPTI tracer also records processes that
// never use NCCL (a gloo job, a data-loader test) and the start of those that do: the
// process's recording session starts here (recording_session.h), and NCCL's first init,
// loading this same library as its profiler plugin, joins it.
#include "recorder/nccl_profiler/recording_session.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  commlens::recorder::TheSession().StartWithCuda();
  return 1;  // CUDA goes on either way: a recording that cannot start never stops the job
}
