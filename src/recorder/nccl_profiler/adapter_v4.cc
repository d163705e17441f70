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

abi::Result StartV4(void* context, void** handle, abi::v4::EventDescr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // NCCL keeps whatever we leave here: never leave it stale
  if (context == nullptr || d == nullptr) return abi::kSuccess;
  Context& ctx = *static_cast<Context*>(context);
  switch (d->type) {
    case abi::kColl:
      *handle = StartColl(ctx, ToCollArgs(d->coll, nullptr));
      break;
    case abi::kP2p:
      *handle = StartP2p(ctx, ToP2pArgs(d->p2p, nullptr));
      break;
    default:
      *handle = StartChildEvent(ctx, *d, d->type);
  }
  return abi::kSuccess;
}

}  // namespace
}  // namespace commlens::recorder::adapter

extern "C" {
__attribute__((visibility("default"))) commlens::recorder::abi::v4::Profiler ncclProfiler_v4 = {
    "commlens",
    commlens::recorder::adapter::InitV4,
    commlens::recorder::adapter::StartV4,
    commlens::recorder::adapter::Stop,
    commlens::recorder::adapter::Record,
    commlens::recorder::adapter::Finalize,
};
}  // extern "C"
