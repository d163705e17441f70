// ABI v5 (NCCL 2.28): API-level events; a Coll's parentObj is its CollApi event; init
// takes the communicator id second.
#include "recorder/nccl_profiler/abi/profiler_v5.h"
#include "recorder/nccl_profiler/adapter_common.h"

namespace commlens::recorder::adapter {
namespace {

abi::Result InitV5(void** context, uint64_t comm_id, int* mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::Logger log) {
  return Init(context, mask, CommParams{comm_id, comm_name, nnodes, nranks, rank, 5},
              kSupportedV5, log);
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v5::Profiler ncclProfiler_v5 = {
    "commlens",
    commlens::recorder::adapter::InitV5,
    commlens::recorder::adapter::StartEvent<5, commlens::recorder::abi::v5::EventDescr>,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
