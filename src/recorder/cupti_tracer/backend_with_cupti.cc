// NewCuptiBackend where CUPTI's headers were found: the real backend.
#include "recorder/cupti_tracer/backend_factory.h"
#include "recorder/cupti_tracer/cupti_backend.h"

namespace commlens::recorder::cupti {

ActivityBackend* NewCuptiBackend(const std::string& library, uint32_t kinds) { return new CuptiBackend(library, kinds); }

}  // namespace commlens::recorder::cupti
