// libFuzzer target: arbitrary bytes as the NVTX payload blob of one NCCL range
// (importers/nsys/nvtx_payload.h), decoded with the NCCL schemas of the real Nsight
// Systems exports in examples/traces/nsys-1gpu and, when that succeeds, read as an NCCL
// call. The seeds are real blobs, so the whole input goes through the NCCL domain as it is.
//
// Then the first byte picks the domain of a second decoding of the remaining bytes: the
// NCCL domain, one with odd schemas under the same ids (every scalar type and enum width,
// named like NCCL's fields; entries that cross or start past the payload's end), or a
// domain with nothing registered, where a blob that names a payload must fail and none may
// yield a field (the corpus's regress_domain_key_collision.bin found one that did).
// Any crash, sanitizer report or abort is a bug: a damaged blob must end in a Status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "importers/nsys/nccl_calls.h"
#include "importers/nsys/nvtx_payload.h"

namespace {

using commlens::importers::nsys::DecodePayload;
using commlens::importers::nsys::NcclRange;
using commlens::importers::nsys::PayloadEntry;
using commlens::importers::nsys::PayloadField;
using commlens::importers::nsys::PayloadSchemas;
using commlens::importers::nsys::ReadNcclFields;

constexpr int64_t kNcclDomain = 1;  // NVTX_EVENTS.domainId of "NCCL" in the exports
constexpr int64_t kOddDomain = 2;
constexpr uint64_t kReductionOp = 16777236;  // NCCL's ncclRedOp_t enum

// NVTX_PAYLOAD_ENTRY_TYPE_* that NCCL's schemas use.
constexpr uint64_t kInt = 5;
constexpr uint64_t kUint64 = 18;
constexpr uint64_t kSize = 22;

// One row of NVTX_PAYLOAD_SCHEMA_ENTRIES (domain 1).
struct SchemaRow {
  uint64_t schema;
  uint64_t type;
  const char* name;
  uint64_t offset;
};

// The NCCL schemas of the moe export (init, destroy, finalize, all-reduce, send, recv,
// all-to-all) and of the ddp export (broadcast, all-gather, which moe does not call).
constexpr SchemaRow kNcclSchemas[] = {
    {16777218, kUint64, "NCCL communicator ID", 0},  // ncclCommDestroy
    {16777218, kInt, "No. of ranks", 8},
    {16777218, kInt, "Rank", 12},
    {16777218, kInt, "CUDA device", 16},
    {16777220, kUint64, "NCCL communicator ID", 0},  // ncclAllGather (ddp)
    {16777220, kSize, "Message size [bytes]", 8},
    {16777221, kUint64, "NCCL communicator ID", 0},  // ncclAllReduce
    {16777221, kSize, "Message size [bytes]", 8},
    {16777221, kReductionOp, "Reduction operation", 16},
    {16777222, kUint64, "NCCL communicator ID", 0},  // ncclBroadcast (ddp)
    {16777222, kSize, "Message size [bytes]", 8},
    {16777222, kInt, "Root", 16},
    {16777225, kUint64, "NCCL communicator ID", 0},  // ncclSend
    {16777225, kSize, "Message size [bytes]", 8},
    {16777225, kInt, "Peer rank", 16},
    {16777226, kUint64, "NCCL communicator ID", 0},  // ncclRecv
    {16777226, kSize, "Message size [bytes]", 8},
    {16777226, kInt, "Peer rank", 16},
    {16777227, kUint64, "NCCL communicator ID", 0},  // ncclCommInitRankConfig
    {16777227, kInt, "No. of ranks", 8},
    {16777227, kInt, "Rank", 12},
    {16777227, kInt, "CUDA device", 16},
    {16777230, kUint64, "NCCL communicator ID", 0},  // ncclCommFinalize
    {16777232, kUint64, "NCCL communicator ID", 0},  // ncclAlltoAll
    {16777232, kSize, "Message size [bytes]", 8},
};

constexpr const char* kReductionOps[] = {"Sum", "Product", "Max", "Min", "Avg"};

// The field names ReadNcclFields looks for, given to the odd domain's entries so that it
// reads values of every type and sign.
constexpr const char* kNcclFieldNames[] = {
    "NCCL communicator ID", "Message size [bytes]", "No. of ranks", "Rank", "Root", "Peer rank"};

// Under every NCCL schema id of the odd domain: each scalar type 1..23 at an unaligned
// offset in the first 24 bytes (the real payloads' largest size), enums of 1, 2, 3 and 8
// bytes, a nested schema's id, and entries that cross or start past any payload's end.
void AddOddSchemas(PayloadSchemas* s) {
  const uint64_t enums[] = {kReductionOp, kReductionOp + 1, kReductionOp + 2, kReductionOp + 3};
  const uint64_t enum_sizes[] = {8, 1, 2, 3};
  for (size_t i = 0; i < 4; ++i) {
    s->AddEnum(kOddDomain, enums[i], enum_sizes[i]);
    s->AddEnumValue(kOddDomain, enums[i], 1, "one");
    s->AddEnumValue(kOddDomain, enums[i], -1, "minus one");
  }
  for (const SchemaRow& row : kNcclSchemas) {
    if (row.offset != 0) continue;  // once per schema id
    for (uint64_t type = 1; type <= 23; ++type)
      s->AddEntry(kOddDomain, row.schema,
                  PayloadEntry{kNcclFieldNames[type % 6], type, type * 7 % 24});
    for (uint64_t e : enums)
      s->AddEntry(kOddDomain, row.schema, PayloadEntry{kNcclFieldNames[e % 6], e, 5});
    s->AddEntry(kOddDomain, row.schema, PayloadEntry{"nested", 16777221, 0});
    s->AddEntry(kOddDomain, row.schema, PayloadEntry{"crosses the end", kUint64, 20});
    s->AddEntry(kOddDomain, row.schema, PayloadEntry{"past the end", kInt, ~uint64_t{0} - 2});
  }
}

PayloadSchemas BuildSchemas() {
  PayloadSchemas s;
  for (const SchemaRow& row : kNcclSchemas)
    s.AddEntry(kNcclDomain, row.schema, PayloadEntry{row.name, row.type, row.offset});
  s.AddEnum(kNcclDomain, kReductionOp, 4);
  for (int64_t v = 0; v < 5; ++v) s.AddEnumValue(kNcclDomain, kReductionOp, v, kReductionOps[v]);
  AddOddSchemas(&s);
  return s;
}

// Decodes |blob| in |domain| and, when it decodes, reads it as an NCCL call.
void DecodeAndRead(std::string_view blob, int64_t domain, const PayloadSchemas& schemas,
                   std::vector<PayloadField>* fields) {
  const bool ok = DecodePayload(blob, domain, schemas, fields).ok();
  const bool registered = domain == kNcclDomain || domain == kOddDomain;
  if (!registered && !fields->empty()) std::abort();  // a schema found in a domain without any
  if (!ok) return;
  NcclRange r;
  ReadNcclFields(*fields, &r);
  if (!r.has_payload || r.bytes < -1) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const PayloadSchemas schemas = BuildSchemas();
  std::vector<PayloadField> fields;
  DecodeAndRead(std::string_view(reinterpret_cast<const char*>(data), size), kNcclDomain, schemas,
                &fields);
  if (size == 0) return 0;
  // Byte values 0, 1 and 2 name their domain; domains 0 and -1 have nothing registered.
  constexpr int64_t kDomains[] = {0, kNcclDomain, kOddDomain, -1};
  DecodeAndRead(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1),
                kDomains[data[0] % 4], schemas, &fields);
  return 0;
}
