#include "importers/kineto/kineto_importer.h"

#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <string>

#include "common/utf8.h"
#include "importers/kineto/kineto_event_parser.h"
#include "importers/kineto/kineto_keys.h"
#include "importers/kineto/kineto_metadata_parser.h"
#include "importers/kineto/kineto_table_writer.h"
#include "importers/kineto/kineto_tokenizer.h"
#include "importers/kineto/kineto_utf8.h"

namespace commlens::importers::COMMLENS_SIMD_NS {

namespace keys = kineto_keys;
namespace ondemand = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

namespace {

// "line L, column C" of byte |offset| (both from 1). Only on the error path: a scan.
std::string LineAndColumn(std::string_view text, uint64_t offset) {
  offset = std::min<uint64_t>(offset, text.size());
  uint64_t line = 1, line_start = 0;
  for (uint64_t i = 0; i < offset; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}


class KinetoDocumentReader {
 public:
  KinetoDocumentReader(const InputBuffer& input, const std::string& name, model::RankTrace* rank)
      : input_(input), name_(name), rank_(rank), writer_(rank) {}

  Status Read();

 private:
  // Where the parser stands, as a byte offset of the input (not of its repaired copy).
  uint64_t OffsetOf(ondemand::document& doc) {
    const char* at = nullptr;
    if (doc.current_location().get(at) != SUCCESS || at == nullptr) return input_.size();
    const auto parsed = static_cast<size_t>(at - json_);
    return repair_ ? repair_->Original(parsed) : parsed;
  }
  // One past the top-level object's closing brace (the input's end when there is none):
  // bytes after it are not read.
  size_t DocumentEnd() const {
    size_t at = 0, open_quote = kNotFound;
    while (at < input_.size() && (input_.data()[at] == ' ' || input_.data()[at] == '\n' ||
                                  input_.data()[at] == '\r' || input_.data()[at] == '\t'))
      ++at;
    const size_t end = at < input_.size() && input_.data()[at] == '{'
                           ? ScanValue(input_.data(), at, input_.size(), &open_quote)
                           : kNotFound;
    return end == kNotFound ? input_.size() : end;
  }
  Status ParseError(ondemand::document& doc, error_code err, std::string_view where) {
    const uint64_t offset = OffsetOf(doc);
    return ErrorAt(offset, std::string(where) + ": " + simdjson::error_message(err) +
                               (repair_ ? FlawNear(input_.view(), repair_->flaws(), 0, offset) : std::string()));
  }
  Status ErrorAt(uint64_t offset, const std::string& what) {
    return Error(name_ + ": invalid JSON at byte " + std::to_string(offset) + " (" +
                 LineAndColumn(input_.view(), offset) + ", " + what + "); " + std::to_string(events_) +
                 " events read before it");
  }
  Status ReadEvents(ondemand::document& doc, ondemand::value value);

  const InputBuffer& input_;
  const std::string& name_;
  model::RankTrace* rank_;
  KinetoTableWriter writer_;
  const char* json_ = nullptr;  // the text parsed: the input, or its repaired copy
  std::optional<Utf8Repair> repair_;  // set when the input is not all UTF-8
  uint64_t events_ = 0;
  int64_t base_ns_ = 0;
  bool saw_events_ = false;
};

Status KinetoDocumentReader::Read() {
  ondemand::parser parser;
  ondemand::document doc;
  simdjson::padded_string_view json(input_.data(), input_.size(), input_.capacity());
  error_code err = parser.iterate(json).get(doc);
  if (err == simdjson::UTF8_ERROR) {  // parse a copy with the bad bytes read as U+FFFD (kineto_utf8.h)
    repair_.emplace(input_.view(), simdjson::SIMDJSON_PADDING);
    CountInvalidUtf8(input_.view(), repair_->flaws(), 0, &rank_->stats, DocumentEnd());
    json = simdjson::padded_string_view(repair_->text().data(), repair_->text().size(), repair_->readable());
    err = parser.iterate(json).get(doc);
  }
  json_ = json.data();
  if (err == simdjson::UNCLOSED_STRING)  // found by the structural pre-pass, which has no position
    return ErrorAt(std::min(UnclosedStringStart(input_.data(), 0, input_.size()), input_.size()),
                   "unclosed string: the file was cut short inside it");
  if (err) return Error(name_ + ": not JSON: " + simdjson::error_message(err));
  ondemand::object top;
  err = doc.get_object().get(top);
  if (err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT)  // found by the structural pre-pass
    return ErrorAt(input_.size(), "the end: the document ends inside an unclosed object or array; "
                                  "the file was cut short");
  if (err == simdjson::INCORRECT_TYPE)
    return Error(name_ + ": not a Kineto trace: the document is not a JSON object");
  if (err) return ParseError(doc, err, "document");
  for (auto result : top) {
    ondemand::field field;
    err = std::move(result).get(field);
    if (err) return ParseError(doc, err, "top-level object");
    std::string_view key = FieldKey(field);
    if (key == keys::kTraceEvents) {
      COMMLENS_RETURN_IF_ERROR(ReadEvents(doc, field.value()));
    } else {
      ReadTopLevelField(key, field.value(), rank_, &base_ns_);
    }
  }
  if (!saw_events_)
    return Error(name_ + ": not a Kineto trace: no \"traceEvents\" array");
  writer_.Finish(base_ns_);
  return OkStatus();
}

Status KinetoDocumentReader::ReadEvents(ondemand::document& doc, ondemand::value value) {
  ondemand::array events;
  error_code err = value.get_array().get(events);
  if (err) return Error(name_ + ": not a Kineto trace: \"traceEvents\" is not an array");
  saw_events_ = true;
  for (auto result : events) {
    ondemand::value v;
    err = result.get(v);
    if (err) return ParseError(doc, err, "traceEvents");
    uint64_t offset = OffsetOf(doc);
    ondemand::object object;
    if (v.get_object().get(object) != SUCCESS) {
      rank_->stats.Count(model::ImportIssue::kMalformedEvent, offset, "event is not an object");
      continue;
    }
    KinetoEvent event;
    err = ParseKinetoEvent(object, &event);
    if (err) return ParseError(doc, err, "traceEvents");
    ++events_;
    writer_.Add(event, offset);
  }
  return OkStatus();
}

}  // namespace

Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name) {
  model::RankTrace rank;
  rank.path = name;
  rank.format = "kineto";
  rank.input_bytes = input.size();
  // Typical Kineto traces hold ~350 bytes per event, a quarter of them on the GPU.
  rank.host.Reserve(input.size() / 400);
  rank.gpu.Reserve(input.size() / 2000);
  KinetoDocumentReader reader(input, name, &rank);
  COMMLENS_RETURN_IF_ERROR(reader.Read());
  return rank;
}

}  // namespace commlens::importers::COMMLENS_SIMD_NS
