// Every JSON commlens writes goes through here (analyze --json, the HTML report's data,
// the Perfetto export, benchmark and topology results), so each output treats a string
// the same way: a name that is not UTF-8 (cut mid-character by a recorder, a damaged
// byte, a hostile trace) is written with U+FFFD in place of each bad byte instead of
// failing the whole file, as nlohmann's dump() would (type_error 316).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/output_file.h"

namespace commlens {

// |doc| as dump(indent) writes it (indent < 0: one line), streamed without building the
// text first (a job of thousands of ranks does not hold its JSON twice).
void WriteJson(OutputFile* out, const nlohmann::json& doc, int indent);
void WriteJson(std::ostream& out, const nlohmann::json& doc, int indent);
// The same text as a string.
std::string JsonText(const nlohmann::json& doc, int indent);
// One JSON string literal, quotes included ("a\"b"), for writers that assemble their
// JSON by hand (the Perfetto export streams its events).
std::string JsonString(std::string_view s);

// Writes |doc| (and a final newline) to |path| through an OutputFile; the error names it.
[[nodiscard]] Status WriteJsonFile(const std::string& path, const nlohmann::json& doc, int indent);

}  // namespace commlens
