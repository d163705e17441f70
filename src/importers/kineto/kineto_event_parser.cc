#include "importers/kineto/kineto_event_parser.h"

#include <cstring>

#include "importers/kineto/kineto_keys.h"
#include "importers/kineto/time_text.h"

namespace commlens::importers::COMMLENS_SIMD_NS {

namespace keys = kineto_keys;
using simdjson::error_code;
using simdjson::SUCCESS;
namespace ondemand = simdjson::ondemand;

namespace {

// The hot helpers, inlined into the field loops: a call per field that takes the field
// through memory cost more than the key's bytes themselves (a store-forwarding stall).
[[gnu::always_inline]] inline std::string_view KeyOf(ondemand::field& field) {
  const char* raw = field.key().raw();
  const char* p = raw;
  while (*p != '"') {
    if (*p == '\\') {
      std::string_view unescaped;
      if (field.unescaped_key().get(unescaped) == SUCCESS) return unescaped;
      return {};
    }
    ++p;
  }
  return {raw, static_cast<size_t>(p - raw)};
}

// |key| is |known|: a compare of a constant length, which the compiler inlines.
[[gnu::always_inline]] inline bool Is(std::string_view key, std::string_view known) {
  return key.size() == known.size() && std::memcmp(key.data(), known.data(), known.size()) == 0;
}

// Integers written otherwise: as doubles, or as strings of digits.
[[gnu::noinline]] bool IntOfOther(ondemand::value value, int64_t* out) {
  ondemand::json_type type;
  if (value.type().get(type) != SUCCESS) return false;
  if (type == ondemand::json_type::number) {
    double d;
    if (value.get_double().get(d) != SUCCESS) return false;
    if (!(d >= -9.2e18 && d <= 9.2e18)) return false;  // also false for NaN
    *out = static_cast<int64_t>(d);
    return true;
  }
  if (type == ondemand::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) != SUCCESS || s.empty() || s.size() > 18) return false;
    int64_t v = 0;
    for (char ch : s) {
      if (ch < '0' || ch > '9') return false;
      v = v * 10 + (ch - '0');
    }
    *out = v;
    return true;
  }
  return false;
}

// Integers are the common case: tried first, the value's type is asked only when not.
[[gnu::always_inline]] inline bool IntOf(ondemand::value value, int64_t* out) {
  if (value.get_int64().get(*out) == SUCCESS) return true;
  return IntOfOther(value, out);
}

[[gnu::always_inline]] inline bool ReadString(ondemand::value value, std::string_view* out) {
  return value.get_string().get(*out) == SUCCESS;
}

[[gnu::always_inline]] inline bool ReadTime(ondemand::value value, int64_t* ns) {
  return MicrosTextToNanos(value.raw_json_token(), ns);
}

// pid/tid: integers, or strings for the synthetic "Spans" rows (those get -1).
[[gnu::always_inline]] inline void ReadId(ondemand::value value, int64_t* out) {
  if (!IntOf(value, out)) *out = -1;
}

error_code ParseArgs(ondemand::value value, KinetoEvent* e) {
  ondemand::object args;
  if (value.get_object().get(args) != SUCCESS) {
    e->bad_field = "args";
    return SUCCESS;
  }
  KinetoCollectiveArgs& c = e->coll;
  for (auto result : args) {
    ondemand::field field;
    error_code err = std::move(result).get(field);
    if (err) return err;
    std::string_view key = KeyOf(field);
    ondemand::value v = field.value();
    bool ok = true;
    if (Is(key, keys::kCorrelation)) ok = IntOf(v, &e->correlation);
    else if (Is(key, keys::kStream)) ok = IntOf(v, &e->stream);
    else if (Is(key, keys::kDevice)) ok = IntOf(v, &e->device);
    else if (Is(key, keys::kBytes)) ok = IntOf(v, &e->bytes);
    else if (Is(key, keys::kSeq)) ok = IntOf(v, &c.seq);
    else if (key.size() < 4) continue;  // the keys below are all longer
    else if (Is(key, keys::kArgName)) ok = ReadString(v, &e->label);
    else if (Is(key, keys::kCollectiveName)) ok = ReadString(v, &c.name);
    else if (Is(key, keys::kInMsgNelems)) ok = IntOf(v, &c.in_elems);
    else if (Is(key, keys::kOutMsgNelems)) ok = IntOf(v, &c.out_elems);
    else if (Is(key, keys::kGroupSize)) ok = IntOf(v, &c.group_size);
    else if (Is(key, keys::kDtype)) ok = ReadString(v, &c.dtype);
    else if (Is(key, keys::kProcessGroupName)) ok = ReadString(v, &c.group_name);
    else if (Is(key, keys::kProcessGroupDesc)) ok = ReadString(v, &c.group_desc);
    else if (Is(key, keys::kProcessGroupRanks)) ok = ReadString(v, &c.group_ranks);
    else if (Is(key, keys::kSrcRank)) ok = IntOf(v, &c.src_rank);
    else if (Is(key, keys::kDstRank)) ok = IntOf(v, &c.dst_rank);
    if (!ok) e->bad_field = "args";
  }
  return SUCCESS;
}

// Whether the table writer uses this event's args. Host operators, Python functions and
// user annotations are kept by name and time alone; their args (input shapes, ids,
// sequence numbers: most of a trace's keys) are skipped unread, but for the
// record_param_comms operators (a batch's ops: kineto_batches.h). Kineto writes "ph",
// "cat" and "name" before "args"; an event that lists them later has its args read.
bool ArgsAreRead(const KinetoEvent& e) {
  if (e.ph != 'X' || e.cat.empty()) return true;
  if (e.cat == keys::kCatCpuOp) return e.name.empty() || e.name == keys::kRecordParamComms;
  return e.cat != keys::kCatPythonFunction && e.cat != keys::kCatUserAnnotation;
}

}  // namespace

std::string_view FieldKey(ondemand::field& field) { return KeyOf(field); }

bool ReadInt(ondemand::value value, int64_t* out) { return IntOf(value, out); }

error_code ParseKinetoEvent(ondemand::object& object, KinetoEvent* e) {
  for (auto result : object) {
    ondemand::field field;
    error_code err = std::move(result).get(field);
    if (err) return err;
    std::string_view key = KeyOf(field);
    if (key.empty()) continue;
    ondemand::value v = field.value();
    switch (key[0]) {
      case 'p':
        if (Is(key, keys::kPh)) {
          std::string_view ph;
          if (ReadString(v, &ph) && !ph.empty()) e->ph = ph[0];
          else e->bad_field = "ph";
        } else if (Is(key, keys::kPid)) {
          ReadId(v, &e->pid);
        }
        break;
      case 'c':
        if (Is(key, keys::kCat) && !ReadString(v, &e->cat)) e->bad_field = "cat";
        break;
      case 'n':
        if (Is(key, keys::kName) && !ReadString(v, &e->name)) e->bad_field = "name";
        break;
      case 't':
        if (Is(key, keys::kTs)) {
          e->has_ts = ReadTime(v, &e->ts_ns);
          if (!e->has_ts) e->bad_field = "ts";
        } else if (Is(key, keys::kTid)) {
          ReadId(v, &e->tid);
        }
        break;
      case 'd':
        if (Is(key, keys::kDur)) {
          e->has_dur = ReadTime(v, &e->dur_ns);
          if (!e->has_dur) e->bad_field = "dur";
        }
        break;
      case 'i':
        if (Is(key, keys::kId) && !IntOf(v, &e->id)) e->bad_field = "id";
        break;
      case 'a':
        if (Is(key, keys::kArgs) && ArgsAreRead(*e)) {
          err = ParseArgs(v, e);
          if (err) return err;
        }
        break;
      default:
        break;
    }
  }
  return SUCCESS;
}

}  // namespace commlens::importers::COMMLENS_SIMD_NS
