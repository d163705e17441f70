// Kineto (PyTorch profiler) Chrome-trace JSON importer.
//
// Pipeline: the file is read whole (gunzipped if needed) into a padded buffer; simdjson's
// on-demand parser walks it once (the tokenizer); each event is decoded into a small
// |KinetoEvent| of views into the buffer (the parser, kineto_event.h); the table writer
// (kineto_table_writer.h) appends typed rows to the rank's columnar tables. Nothing is
// copied per event but the interned strings.
//
// Errors: a file that is not JSON, not a Kineto trace, or cut short fails with a message
// naming the file and the byte offset; a single bad event is counted in RankTrace::stats
// and skipped.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "importers/common/input_file.h"
#include "model/trace.h"

namespace commlens::importers {

// True when |head| (the first bytes of a decoded file) looks like a Chrome-trace JSON.
bool LooksLikeKinetoTrace(std::string_view head);

// Imports one rank's trace. The rank is taken from distributedInfo; when absent it is
// left at -1 (the loader falls back to the file name and says so).
Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name);

}  // namespace commlens::importers
