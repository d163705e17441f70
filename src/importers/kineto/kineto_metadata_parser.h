// Decodes the small top-level values of a Kineto trace beside "traceEvents":
// distributedInfo (rank, world size, process groups), deviceProperties,
// baseTimeNanoseconds and host_name. SIMD-flavoured like kineto_event_parser.h.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>

#include "model/trace.h"

#ifndef COMMLENS_SIMD_NS
#error "kineto_metadata_parser.h is for the SIMD-flavoured importer sources only"
#endif

namespace commlens::importers::COMMLENS_SIMD_NS {

// Reads the value of top-level key |key| into |rank| (|*base_ns| for
// baseTimeNanoseconds); other keys are ignored. A bad field is counted in rank->stats
// or left at its default: metadata never stops an import.
void ReadTopLevelField(std::string_view key, simdjson::ondemand::value value, model::RankTrace* rank,
                       int64_t* base_ns);

}  // namespace commlens::importers::COMMLENS_SIMD_NS
