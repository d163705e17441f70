// ABI v4 (NCCL 2.27): no API-level events; a Coll's parentObj is its Group, which we do
// not record, so ops carry no api_id.
#include "recorder/nccl_profiler/abi/profiler_v4.h"
#include "recorder/nccl_profiler/adapter_common.h"

namespace commlens::recorder::adapter {
namespace {

abi::Result InitV4(void** context, int* mask, const char* comm_name, uint64_t comm_hash,
                   int nnodes, int nranks, int rank, abi::Logger log) {
  return Init(context, mask, CommParams{comm_hash, comm_name, nnodes, nranks, rank, 4},
              kSupportedV4, log);
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v4::Profiler ncclProfiler_v4 = {
    "commlens",
    commlens::recorder::adapter::InitV4,
    commlens::recorder::adapter::StartEvent<4, commlens::recorder::abi::v4::EventDescr>,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
