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

abi::Result StartV6(void* context, void** handle, abi::v6::EventDescr* d) {
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
    case abi::kCeColl:
      *handle = StartCeColl(ctx, CeCollArgs{d->ceColl.func, d->ceColl.datatype, d->ceColl.count,
                                            d->ceColl.seqNumber, d->ceColl.root,
                                            Value(d->parentObj)});
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
__attribute__((visibility("default"))) commlens::recorder::abi::v6::Profiler ncclProfiler_v6 = {
    "commlens",
    commlens::recorder::adapter::InitV6,
    commlens::recorder::adapter::StartV6,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
