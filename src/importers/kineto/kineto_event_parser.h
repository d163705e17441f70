// Decodes Kineto events with simdjson's on-demand API. Included only by the sources that
// are compiled once per SIMD flavour (see kineto_dispatch.cc): each copy of these
// functions lives in the namespace COMMLENS_SIMD_NS names.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>

#include "importers/kineto/kineto_event.h"

#ifndef COMMLENS_SIMD_NS
#error "kineto_event_parser.h is for the SIMD-flavoured importer sources only"
#endif

namespace commlens::importers {

namespace COMMLENS_SIMD_NS {

// Decodes |object| into |event|. Returns a structural error (the document cannot be read
// further) or SUCCESS; field type problems are reported through |event->bad_field|.
simdjson::error_code ParseKinetoEvent(simdjson::ondemand::object& object, KinetoEvent* event);

// The key of |field| as written (Kineto keys need no unescaping); falls back to the
// unescaped key when the raw key holds an escape.
std::string_view FieldKey(simdjson::ondemand::field& field);

// An integer field value, accepting numbers written as doubles or as strings of digits.
bool ReadInt(simdjson::ondemand::value value, int64_t* out);

}  // namespace COMMLENS_SIMD_NS

}  // namespace commlens::importers
