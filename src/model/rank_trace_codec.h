// A compact binary form of one finished RankTrace, for moving a rank between the
// processes of a distributed analysis (src/distributed/): a worker imports a file,
// encodes its ranks and sends them; rank 0 decodes them into the same model it would have
// imported itself, so every later pass and analysis sees identical input.
//
// Not a file format: both ends run the same build on the same kind of machine. The header
// holds a magic ("CLRT"), the codec version and a byte-order mark; a buffer written with
// another version or byte order is refused, not misread. Then every field of the rank in
// the order of model/trace.h: plain values raw, strings and columns as u64 count + raw
// bytes, lists of structs item by item, the string pool in id order (so every StringId in
// the tables keeps its meaning), the import statistics kind by kind. Each struct's fields
// are listed as one structured binding: a field added to the model and not to the codec
// stops the build.
//
// Decode trusts nothing: every length is checked against the bytes left, every column
// against its table's length (and a counter's values against its times), every enum
// against its range, every string id against the pool and every row reference (activity
// to comm op, comm op to activity and group) against its table, so a damaged buffer fails
// with a Status naming the byte offset and never reads past its end or yields a model an
// analysis could index out of bounds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace commlens::model {

// Appends |rank|'s encoding to |out| (reserving its exact size first).
void EncodeRankTrace(const RankTrace& rank, std::vector<uint8_t>* out);

// The rank |bytes| holds; the span must be exactly one encoding.
Result<RankTrace> DecodeRankTrace(std::span<const uint8_t> bytes);

}  // namespace commlens::model
