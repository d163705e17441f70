// ABI v7 (NCCL after 2.30; NCCL tries v7 first): v6 plus each call's user tag, and the
// Coll's kernel variant and symmetric-kernel flag, kept in OpDetail records; and kernel
// phase events (initial sync, compute, final sync per channel of a symmetric kernel),
// kept in KernelPhase records when the event mask asks for them (`phases`: per-channel
// events are what costs the recorder most, docs/performance.md, so not by default).
#include "recorder/nccl_profiler/abi/profiler_v7.h"
#include "recorder/nccl_profiler/adapter_common.h"

namespace commlens::recorder::adapter {
namespace {

abi::Result InitV7(void** context, uint64_t comm_id, int* mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::Logger log) {
  return Init(context, mask, CommParams{comm_id, comm_name, nnodes, nranks, rank, 7},
              kSupportedV7, log);
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v7::Profiler ncclProfiler_v7 = {
    "commlens",
    commlens::recorder::adapter::InitV7,
    commlens::recorder::adapter::StartEvent<7, commlens::recorder::abi::v7::EventDescr>,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
