#include "importers/nsys/nvtx_payload.h"

#include <cmath>
#include <cstring>

namespace commlens::importers::nsys {

namespace {

// Types from 2^24 up are ids of registered enums or schemas.
constexpr uint64_t kFirstRegisteredType = uint64_t{1} << 24;
constexpr uint64_t kMaxPayloads = 1024;  // a range carries a handful; more is damage

bool ReadU64(std::string_view blob, uint64_t at, uint64_t* out) {
  if (at > blob.size() || blob.size() - at < 8) return false;
  std::memcpy(out, blob.data() + at, 8);
  return true;
}

bool IsSigned(uint64_t type) {
  switch (type) {
    case 1: case 3: case 5: case 7: case 9: case 11: case 13: case 15: case 17: return true;
    default: return false;
  }
}

int64_t LoadInteger(const char* p, size_t size, bool is_signed) {
  switch (size) {
    case 1: { int8_t s; uint8_t u; std::memcpy(&s, p, 1); std::memcpy(&u, p, 1); return is_signed ? s : u; }
    case 2: { int16_t s; uint16_t u; std::memcpy(&s, p, 2); std::memcpy(&u, p, 2); return is_signed ? s : u; }
    case 4: { int32_t s; uint32_t u; std::memcpy(&s, p, 4); std::memcpy(&u, p, 4); return is_signed ? s : u; }
    default: { int64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

}  // namespace

bool PayloadSchemas::AddEntry(int64_t domain, uint64_t schema, PayloadEntry entry, size_t max_entries) {
  std::vector<PayloadEntry>& entries = schemas_[{domain, schema}];
  if (entries.size() >= max_entries) return false;
  entries.push_back(std::move(entry));
  return true;
}

void PayloadSchemas::AddEnum(int64_t domain, uint64_t schema, uint64_t size) {
  enums_[{domain, schema}].size = size;
}

void PayloadSchemas::AddEnumValue(int64_t domain, uint64_t schema, int64_t value, std::string name) {
  enums_[{domain, schema}].names[value] = std::move(name);
}

const std::vector<PayloadEntry>* PayloadSchemas::Schema(int64_t domain, uint64_t schema) const {
  auto it = schemas_.find({domain, schema});
  return it == schemas_.end() ? nullptr : &it->second;
}

const PayloadEnum* PayloadSchemas::Enum(int64_t domain, uint64_t schema) const {
  auto it = enums_.find({domain, schema});
  return it == enums_.end() ? nullptr : &it->second;
}

size_t ScalarTypeSize(uint64_t type) {
  switch (type) {
    case 1: case 2: case 11: case 12: return 1;          // char, uchar, (u)int8
    case 3: case 4: case 13: case 14: return 2;          // short, ushort, (u)int16
    case 5: case 6: case 15: case 16: case 19: return 4; // int, uint, (u)int32, float
    case 7: case 8: case 9: case 10: case 17: case 18:   // long, long long, (u)int64
    case 20: case 22: case 23: return 8;                 // double, size_t, address
    default: return 0;                                   // long double, chars, strings...
  }
}

Status DecodePayload(std::string_view blob, int64_t domain, const PayloadSchemas& schemas,
                     std::vector<PayloadField>* fields) {
  fields->clear();
  uint64_t count = 0;
  if (!ReadU64(blob, 0, &count)) return Error("payload blob shorter than its 8-byte header");
  if (count > kMaxPayloads) return Error("payload blob claims " + std::to_string(count) + " payloads");
  for (uint64_t p = 0; p < count; ++p) {
    uint64_t schema_id = 0, size = 0, offset = 0;
    const uint64_t at = 8 + p * 24;
    if (!ReadU64(blob, at, &schema_id) || !ReadU64(blob, at + 8, &size) || !ReadU64(blob, at + 16, &offset))
      return Error("payload blob header cut short at payload " + std::to_string(p));
    if (offset > blob.size() || size > blob.size() - offset)
      return Error("payload " + std::to_string(p) + " (" + std::to_string(size) + " bytes at " +
                   std::to_string(offset) + ") lies outside the " + std::to_string(blob.size()) + "-byte blob");
    const std::vector<PayloadEntry>* entries = schemas.Schema(domain, schema_id);
    if (!entries) return Error("payload schema " + std::to_string(schema_id) + " is not in the export");
    const char* data = blob.data() + offset;
    for (const PayloadEntry& e : *entries) {
      PayloadField f;
      f.name = e.name;
      size_t width = ScalarTypeSize(e.type);
      const PayloadEnum* en = nullptr;
      if (width == 0 && e.type >= kFirstRegisteredType) {
        en = schemas.Enum(domain, e.type);
        if (en && (en->size == 1 || en->size == 2 || en->size == 4 || en->size == 8)) width = en->size;
      }
      if (width == 0) continue;  // a type commlens does not decode
      if (e.offset > size || width > size - e.offset) return Error("payload entry '" + e.name + "' lies outside its payload");
      const char* at_field = data + e.offset;
      if (e.type == 19 || e.type == 20) {
        f.is_real = true;
        if (e.type == 19) { float v; std::memcpy(&v, at_field, 4); f.real = v; }
        else std::memcpy(&f.real, at_field, 8);
        if (std::isfinite(f.real) && std::fabs(f.real) < 9.0e18) f.value = static_cast<int64_t>(f.real);
      } else {
        f.value = LoadInteger(at_field, width, en ? true : IsSigned(e.type));
      }
      if (en) {
        auto it = en->names.find(f.value);
        if (it != en->names.end()) f.enum_name = it->second;
      }
      fields->push_back(f);
    }
  }
  return OkStatus();
}

}  // namespace commlens::importers::nsys
