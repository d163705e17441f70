// ABI v5 (NCCL 2.28): API-level events; a Coll's parentObj is its CollApi event.
#include "recorder/nccl_profiler/abi/profiler_v5.h"
#include "recorder/nccl_profiler/adapter_common.h"

namespace commlens::recorder::adapter {
namespace {

abi::Result InitV5(void** context, uint64_t comm_id, int* mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::Logger log) {
  return Init(context, mask, CommParams{comm_id, comm_name, nnodes, nranks, rank, 5},
              kSupportedV5, log);
}

abi::Result StartV5(void* context, void** handle, abi::v5::EventDescr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  if (context == nullptr || d == nullptr) return abi::kSuccess;
  Context& ctx = *static_cast<Context*>(context);
  switch (d->type) {
    case abi::kColl:
      *handle = StartColl(ctx, ToCollArgs(d->coll, d->parentObj));
      break;
    case abi::kP2p:
      *handle = StartP2p(ctx, ToP2pArgs(d->p2p, d->parentObj));
      break;
    case abi::kGroupApi:
    case abi::kCollApi:
    case abi::kP2pApi:
    case abi::kKernelLaunch:
      *handle = StartApiEvent(ctx, *d, d->type);
      break;
    default:
      *handle = StartChildEvent(ctx, *d, d->type);
  }
  return abi::kSuccess;
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v5::Profiler ncclProfiler_v5 = {
    "commlens",
    commlens::recorder::adapter::InitV5,
    commlens::recorder::adapter::StartV5,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
