// NVTX extended payloads as an Nsight Systems SQLite export stores them (`nsys export
// --include-blobs=true`): NVTX_EVENTS.binaryData holds the payload data of one range, laid
// out by schemas the process registered (NVTX_PAYLOAD_SCHEMAS / _SCHEMA_ENTRIES, enums in
// NVTX_PAYLOAD_ENUMS / _ENUM_ENTRIES). NCCL describes each API call this way (communicator
// id, message size, reduction op, root or peer, and at init the rank and rank count).
//
// Blob layout (observed in Nsight Systems 2025.3 exports, little-endian u64 words):
//   count, then count x {schema id, payload size, offset of the payload in the blob},
//   then the payload bytes. Each payload is a struct laid out by its schema: an entry has
//   a type (NVTX_PAYLOAD_ENTRY_TYPE_*: 1..23 are C scalar types; ids from 2^24 name a
//   registered enum or schema) and a byte offset.
//
// The decoder checks every offset and size against the blob: a damaged blob is an error,
// never a read outside it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"

namespace commlens::importers::nsys {

struct PayloadEntry {
  std::string name;
  uint64_t type = 0;
  uint64_t offset = 0;
};

struct PayloadEnum {
  uint64_t size = 4;  // bytes of a value
  std::unordered_map<int64_t, std::string> names;
};

// The schemas and enums of one export, keyed by (domain, schema id).
class PayloadSchemas {
 public:
  // Adds |entry| to its schema unless the schema has |max_entries| already (false then).
  bool AddEntry(int64_t domain, uint64_t schema, PayloadEntry entry, size_t max_entries = SIZE_MAX);
  void AddEnum(int64_t domain, uint64_t schema, uint64_t size);
  void AddEnumValue(int64_t domain, uint64_t schema, int64_t value, std::string name);
  bool empty() const { return schemas_.empty(); }

  const std::vector<PayloadEntry>* Schema(int64_t domain, uint64_t schema) const;
  const PayloadEnum* Enum(int64_t domain, uint64_t schema) const;

 private:
  // The whole pair: ids are 64-bit values the process chose, so any single word mixed
  // from domain and id can name two pairs (and find one domain's schema from another).
  using Key = std::pair<int64_t, uint64_t>;
  std::map<Key, std::vector<PayloadEntry>> schemas_;
  std::map<Key, PayloadEnum> enums_;
};

// One decoded field: its entry's name, the integer (or the double for floating types),
// and the enum's name for the value when the entry's type is a registered enum.
struct PayloadField {
  std::string_view name;
  int64_t value = 0;
  double real = 0;
  bool is_real = false;
  std::string_view enum_name;
};

// Byte size of a scalar entry type (NVTX_PAYLOAD_ENTRY_TYPE_* 1..23, x86-64 ABI), 0 when
// |type| is not a scalar commlens decodes.
size_t ScalarTypeSize(uint64_t type);

// Decodes |blob| with |schemas| of |domain| into |fields| (cleared first). Entries of
// types commlens does not decode (strings, arrays, nested schemas) are skipped. Fails on a
// blob whose header or a payload lies outside it, or an unknown schema id.
Status DecodePayload(std::string_view blob, int64_t domain, const PayloadSchemas& schemas,
                     std::vector<PayloadField>* fields);

}  // namespace commlens::importers::nsys
