// The backend a recording process gets (recorder/nccl_profiler): CUPTI's where this
// commlens was built with the CUDA toolkit's CUPTI headers (cupti_backend.h), else one
// that does not start and says why. Never freed (see recording_session.h).
#pragma once

#include <string>

#include "recorder/cupti_tracer/activity_backend.h"
#include "recorder/cupti_tracer/cupti_kinds.h"

namespace commlens::recorder::cupti {

// |library|: libcupti's path, "" for the loader's search; |kinds|: CuptiKind bits.
ActivityBackend* NewCuptiBackend(const std::string& library, uint32_t kinds = kDefaultCuptiKinds);

}  // namespace commlens::recorder::cupti
