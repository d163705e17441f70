// ABI v6 (NCCL 2.29.2 to 2.30): v5 plus copy-engine collectives. CeColl events get no
// state updates and no GPU timer from NCCL; we record them with host times only.
// CeSync and CeBatch are not recorded.
#include "recorder/nccl_profiler/abi/profiler_v6.h"
#include "recorder/nccl_profiler/adapter_common.h"

namespace commlens::recorder::adapter {
namespace {

abi::Result InitV6(void** context, uint64_t comm_id, int* mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::Logger log) {
  return Init(context, mask, CommParams{comm_id, comm_name, nnodes, nranks, rank, 6},
              kSupportedV6, log);
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v6::Profiler ncclProfiler_v6 = {
    "commlens",
    commlens::recorder::adapter::InitV6,
    commlens::recorder::adapter::StartEvent<6, commlens::recorder::abi::v6::EventDescr>,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
