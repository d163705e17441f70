// Whether a JSON file is a Kineto (Chrome-trace) trace, from its first decoded bytes.
//
// Any JSON object could be one, and a folder of traces often holds other JSON too (a
// job's config.json, a step log): those must be told apart without parsing whole files.
// Kineto writes "schemaVersion" and "deviceProperties" first, then metadata, then
// "traceEvents" (docs/formats.md); a Chrome trace from another tool starts with
// "traceEvents" or "displayTimeUnit". So the head's top-level keys are scanned:
//   - one of the trace keys below: a trace;
//   - the first object closes inside the head without one: not a trace (a config, a line
//     of a JSON-lines log);
//   - the head ends inside the object before any trace key: a trace, as far as a cheap
//     look can tell (a trace whose first value is larger than the head still loads, and a
//     broken one is still reported).
// Only keys at depth 1 count: a config that mentions "traceEvents" inside a nested object
// is not a trace.
#include <array>

#include "importers/kineto/kineto_importer.h"

namespace commlens::importers {

namespace {

constexpr std::array<std::string_view, 7> kTraceKeys = {
    "traceEvents", "schemaVersion", "deviceProperties", "distributedInfo",
    "displayTimeUnit", "baseTimeNanoseconds", "traceName",
};

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

bool LooksLikeKinetoTrace(std::string_view head) {
  size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // a UTF-8 byte order mark
  while (i < head.size() && IsSpace(head[i])) ++i;
  if (i == head.size() || head[i] != '{') return false;
  int depth = 0;
  for (; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return false;  // the whole first object seen, no trace key in it
    } else if (c == '"') {
      const size_t begin = ++i;
      while (i < head.size() && head[i] != '"') i += head[i] == '\\' ? 2 : 1;
      if (i >= head.size()) return true;  // the head ends inside a string
      if (depth != 1) continue;
      size_t after = i + 1;
      while (after < head.size() && IsSpace(head[after])) ++after;
      if (after < head.size() && head[after] != ':') continue;  // a value, not a key
      const std::string_view key = head.substr(begin, i - begin);
      for (std::string_view k : kTraceKeys)
        if (key == k) return true;
    }
  }
  return true;  // the head ends inside the first object: cannot tell cheaply
}

}  // namespace commlens::importers
