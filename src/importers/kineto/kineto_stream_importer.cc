// The streaming Kineto reader: a file of any size in a few MB (kineto_importer.h).
//
// The decoded stream passes through one window buffer (per thread, reused across files):
// a hand-written top-level loop walks the document object key by key; the value of
// "traceEvents" goes through the EventScanner (kineto_tokenizer.h), and each run of
// complete events in the window is handed to simdjson as one JSON array, by writing '['
// over the comma before the run's first event and ']' after its last (the window is
// ours). Other top-level values are small: each is cut out whole and parsed on its own.
// When the window holds no complete element, its unread tail moves to the front and more
// is read; an element larger than the window doubles it (bounded by the largest event).
//
// Offsets are stream offsets (bytes of the decoded file from its start), so messages and
// counted bad events name the same bytes as the whole-file reader does. Lines for error
// messages: newlines are counted as bytes leave the window.
//
// Bytes that are not UTF-8 (kineto_utf8.h): a run of events that simdjson refuses for them
// is parsed again from a copy with each bad sequence read as U+FFFD, and offsets in the
// copy are mapped back; the keys and values outside the array are checked as they pass.
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "importers/common/chunked_source.h"
#include "importers/kineto/kineto_event_parser.h"
#include "importers/kineto/kineto_importer.h"
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

// After the window's bytes: simdjson's padding, and the byte a run's ']' may take when
// the run ends at the window's end.
constexpr size_t kPadding = simdjson::SIMDJSON_PADDING + 64;

// One per importing thread: the window and the parser (its index buffers) live as long
// as the thread, so a second file or a second window touches no fresh pages.
struct WindowBuffers {
  std::unique_ptr<char[]> data;
  size_t capacity = 0;  // without the padding
  ondemand::parser parser;

  void Reset(size_t window) {
    if (capacity == window) return;
    data = std::make_unique_for_overwrite<char[]>(window + kPadding);
    capacity = window;
  }
};
thread_local WindowBuffers t_buffers;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class KinetoStreamReader {
 public:
  KinetoStreamReader(ChunkedSource* source, const std::string& name, model::RankTrace* rank,
                     WindowBuffers* buffers, bool drop_host_events)
      : source_(source), name_(name), rank_(rank), writer_(rank, drop_host_events), b_(buffers) {}

  Status Read();

 private:
  // Positions below are window offsets: buffer index, stream offset base_ + index.
  char* data() { return b_->data.get(); }
  uint64_t Stream(size_t at) const { return base_ + at; }

  // Moves [keep, end_) to the front (keep <= every position still needed; the caller's
  // positions move down by the returned shift), grows the window when nothing can be
  // dropped and it is full, and reads more. |*more| is false at the end of the data.
  Result<size_t> Fill(size_t keep, bool* more);
  // The first non-space byte at or after |*at| (refilling; |*at| follows the shift), or
  // -1 at the end of the data.
  Result<int> Peek(size_t* at);
  // One past the value starting at |at| (refilling; |*at| follows the shift).
  Result<size_t> ValueEnd(size_t* at);

  Status ReadTopLevel(size_t at);
  Status ReadEvents(size_t* at);
  // Parses data()[from, to] (a '[' ... ']' text) as the array of events it is.
  Status ParseBatch(size_t from, size_t to, bool after_comma);
  // The events of a run |doc| holds, parsed from data()[from, to] or from |repair|, its
  // copy with the bytes that are not UTF-8 replaced.
  Status ReadBatch(ondemand::document& doc, size_t from, size_t to, bool after_comma, const Utf8Repair* repair);
  void ReadSmallValue(std::string_view key, size_t from, size_t to);
  // Counts the bytes of data()[from, to) that are not UTF-8 (a top-level key or value).
  void CountInvalidUtf8In(size_t from, size_t to) {
    const std::string_view text(data() + from, to - from);
    if (!simdjson::validate_utf8(text)) CountInvalidUtf8(text, FindUtf8Flaws(text), Stream(from), &rank_->stats);
  }

  std::string LineAndColumn(size_t at);
  Status ErrorAt(size_t at, const std::string& what) {
    return Error(name_ + ": invalid JSON at byte " + std::to_string(Stream(at)) + " (" + LineAndColumn(at) +
                 ", " + what + "); " + std::to_string(events_) + " events read before it");
  }
  Status CutShort() {
    return ErrorAt(end_, "the end: the document ends inside an unclosed object or array; the file was cut short");
  }
  Status UnclosedString(size_t quote) {
    return ErrorAt(quote, "unclosed string: the file was cut short inside it");
  }

  ChunkedSource* source_;
  const std::string& name_;
  model::RankTrace* rank_;
  KinetoTableWriter writer_;
  WindowBuffers* b_;
  size_t end_ = 0;          // bytes in the window
  uint64_t base_ = 0;       // stream offset of data()[0]
  bool at_end_ = false;     // the source has nothing more
  uint64_t lines_ = 0;      // newlines before data()[0]
  uint64_t line_start_ = 0; // stream offset of the line data()[0] is on
  uint64_t events_ = 0;
  int64_t base_ns_ = 0;
  bool saw_events_ = false;
};

Result<size_t> KinetoStreamReader::Fill(size_t keep, bool* more) {
  *more = false;
  if (at_end_) return size_t{0};
  // Newlines in the bytes that leave, for the line numbers of later errors.
  for (const char* p = data(); (p = static_cast<const char*>(std::memchr(p, '\n', data() + keep - p)));) {
    ++lines_;
    line_start_ = base_ + static_cast<uint64_t>(++p - data());
  }
  std::memmove(data(), data() + keep, end_ - keep);
  end_ -= keep;
  base_ += keep;
  if (end_ == b_->capacity) {  // one element fills the window: double it
    size_t grown = b_->capacity * 2;
    auto bigger = std::make_unique_for_overwrite<char[]>(grown + kPadding);
    std::memcpy(bigger.get(), data(), end_);
    b_->data = std::move(bigger);
    b_->capacity = grown;
  }
  COMMLENS_ASSIGN_OR_RETURN(size_t got, source_->Read(data() + end_, b_->capacity - end_));
  end_ += got;
  std::memset(data() + end_, ' ', kPadding);
  if (got == 0) at_end_ = true;
  *more = got > 0;
  return keep;
}

Result<int> KinetoStreamReader::Peek(size_t* at) {
  while (true) {
    while (*at < end_ && IsSpace(data()[*at])) ++*at;
    if (*at < end_) return static_cast<unsigned char>(data()[*at]);
    bool more = false;
    COMMLENS_ASSIGN_OR_RETURN(size_t shift, Fill(*at, &more));
    *at -= shift;
    if (!more) return -1;
  }
}

Result<size_t> KinetoStreamReader::ValueEnd(size_t* at) {
  while (true) {
    size_t quote = kNotFound;
    size_t value_end = ScanValue(data(), *at, end_, &quote);
    if (value_end != kNotFound) return value_end;
    bool more = false;
    COMMLENS_ASSIGN_OR_RETURN(size_t shift, Fill(*at, &more));
    *at -= shift;
    if (!more) {
      if (quote != kNotFound) return UnclosedString(quote - shift);
      char c = *at < end_ ? data()[*at] : '{';
      if (c != '{' && c != '[') return end_;  // a scalar ends with the data
      return CutShort();
    }
  }
}

std::string KinetoStreamReader::LineAndColumn(size_t at) {
  at = std::min(at, end_);
  uint64_t line = lines_ + 1, start = line_start_;
  for (size_t i = 0; i < at; ++i)
    if (data()[i] == '\n') ++line, start = Stream(i + 1);
  return "line " + std::to_string(line) + ", column " + std::to_string(Stream(at) - start + 1);
}

Status KinetoStreamReader::Read() {
  size_t at = 0;
  COMMLENS_ASSIGN_OR_RETURN(int c, Peek(&at));
  if (c == -1) return Error(name_ + ": not JSON: the file is empty");
  if (c != '{') {
    if (c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9'))
      return Error(name_ + ": not a Kineto trace: the document is not a JSON object");
    return Error(name_ + ": not JSON: byte " + std::to_string(Stream(at)) + " starts no JSON value");
  }
  COMMLENS_RETURN_IF_ERROR(ReadTopLevel(at + 1));
  if (!saw_events_) return Error(name_ + ": not a Kineto trace: no \"traceEvents\" array");
  writer_.Finish(base_ns_);
  // What follows the document (a newline) is not read, but counted in the input's size.
  for (bool more = true; more;) COMMLENS_RETURN_IF_ERROR(Fill(end_, &more).status());
  rank_->input_bytes = source_->decoded_bytes();
  return OkStatus();
}

Status KinetoStreamReader::ReadTopLevel(size_t at) {
  for (bool first = true;; first = false) {
    COMMLENS_ASSIGN_OR_RETURN(int c, Peek(&at));
    if (c == -1) return CutShort();
    if (c == '}' && first) return OkStatus();
    if (c != '"') return ErrorAt(at, "top-level object: expected a key");
    COMMLENS_ASSIGN_OR_RETURN(size_t key_end, ValueEnd(&at));
    std::string key(data() + at + 1, key_end - at - 2);  // as written: the keys we read have no escapes
    CountInvalidUtf8In(at, key_end);
    at = key_end;
    COMMLENS_ASSIGN_OR_RETURN(c, Peek(&at));
    if (c == -1) return CutShort();
    if (c != ':') return ErrorAt(at, "top-level object: expected ':' after a key");
    ++at;
    COMMLENS_ASSIGN_OR_RETURN(c, Peek(&at));
    if (c == -1) return CutShort();
    if (key == keys::kTraceEvents) {
      if (c != '[') return Error(name_ + ": not a Kineto trace: \"traceEvents\" is not an array");
      saw_events_ = true;
      COMMLENS_RETURN_IF_ERROR(ReadEvents(&at));
    } else {
      COMMLENS_ASSIGN_OR_RETURN(size_t value_end, ValueEnd(&at));
      CountInvalidUtf8In(at, value_end);
      if (key == keys::kDistributedInfo || key == keys::kDeviceProperties ||
          key == keys::kBaseTimeNanoseconds || key == keys::kHostName)
        ReadSmallValue(key, at, value_end);
      at = value_end;
    }
    COMMLENS_ASSIGN_OR_RETURN(c, Peek(&at));
    if (c == -1) return CutShort();
    if (c == '}') return OkStatus();  // what follows the document is not read
    if (c != ',') return ErrorAt(at, "top-level object: expected ',' or '}'");
    ++at;
  }
}

// |*at| is the array's '['; on return, just past its ']'. Each pass scans what the window
// holds, parses the run of complete events in it, and refills. |start| is where the next
// run starts: the '[' itself, or (|pending_comma|) the end of the last parsed event, where
// the comma before the next one is still to be found and turned into the run's '['.
Status KinetoStreamReader::ReadEvents(size_t* at) {
  size_t start = *at;
  bool pending_comma = false, after_comma = false;
  EventScanner scan(start + 1);
  while (true) {
    scan.Scan(data(), end_, at_end_);
    if (pending_comma) {
      size_t q = start;
      while (q < end_ && IsSpace(data()[q])) ++q;
      if (q < end_ && data()[q] != ']') {
        if (data()[q] != ',') return ErrorAt(q, "traceEvents: expected ',' or ']' after an event");
        data()[q] = '[';
        scan.SkipTo(q + 1);
        start = q;
        pending_comma = false;
        after_comma = true;
      }
    }
    if (scan.array_end() != kNotFound) {
      size_t close = scan.array_end();
      if (!pending_comma) COMMLENS_RETURN_IF_ERROR(ParseBatch(start, close, after_comma));
      *at = close + 1;
      return OkStatus();
    }
    size_t cut = scan.last_cut();
    if (!pending_comma && cut != kNotFound && cut > start) {
      char saved = data()[cut];
      data()[cut] = ']';
      Status parsed = ParseBatch(start, cut, after_comma);
      data()[cut] = saved;
      COMMLENS_RETURN_IF_ERROR(parsed);
      start = cut;
      pending_comma = true;
      scan.ForgetCut();
      continue;
    }
    if (at_end_) {
      if (!scan.in_string()) return CutShort();
      return UnclosedString(UnclosedStringStart(data(), start, end_));
    }
    bool more = false;
    COMMLENS_ASSIGN_OR_RETURN(size_t shift, Fill(start, &more));
    start -= shift;
    scan.Shift(shift);
  }
}

Status KinetoStreamReader::ParseBatch(size_t from, size_t to, bool after_comma) {
  simdjson::padded_string_view json(data() + from, to + 1 - from, b_->capacity + kPadding - from);
  ondemand::document doc;
  error_code err = b_->parser.iterate(json).get(doc);
  if (err == simdjson::UTF8_ERROR) {  // the run again, with the bad bytes read as U+FFFD
    const std::string_view text(data() + from, to + 1 - from);
    const Utf8Repair repair(text, simdjson::SIMDJSON_PADDING);
    CountInvalidUtf8(text, repair.flaws(), Stream(from), &rank_->stats);
    json = simdjson::padded_string_view(repair.text().data(), repair.text().size(), repair.readable());
    err = b_->parser.iterate(json).get(doc);
    if (err) return ErrorAt(from, std::string("traceEvents: ") + simdjson::error_message(err));
    return ReadBatch(doc, from, to, after_comma, &repair);
  }
  if (err) return ErrorAt(from, std::string("traceEvents: ") + simdjson::error_message(err));
  return ReadBatch(doc, from, to, after_comma, nullptr);
}

Status KinetoStreamReader::ReadBatch(ondemand::document& doc, size_t from, size_t to, bool after_comma,
                                     const Utf8Repair* repair) {
  // Where the parser stands (a window position), for messages and counted events; the
  // run's end when it cannot say.
  auto offset = [&]() -> size_t {
    const char* p = nullptr;
    if (doc.current_location().get(p) != SUCCESS || p == nullptr) return to;
    if (repair) return from + repair->Original(static_cast<size_t>(p - repair->text().data()));
    return static_cast<size_t>(p - data());
  };
  auto error = [&](error_code err) {
    const size_t at = offset();
    return ErrorAt(at, std::string("traceEvents: ") + simdjson::error_message(err) +
                           (repair ? FlawNear(std::string_view(data() + from, to + 1 - from), repair->flaws(),
                                              Stream(from), Stream(at))
                                   : std::string()));
  };
  ondemand::array events;
  error_code err = doc.get_array().get(events);
  if (err) return error(err);
  size_t count = 0;
  for (auto result : events) {
    ondemand::value v;
    err = result.get(v);
    if (err) return error(err);
    ++count;
    uint64_t event_offset = Stream(offset());
    ondemand::object object;
    if (v.get_object().get(object) != SUCCESS) {
      rank_->stats.Count(model::ImportIssue::kMalformedEvent, event_offset, "event is not an object");
      continue;
    }
    KinetoEvent event;
    err = ParseKinetoEvent(object, &event);
    if (err) return error(err);
    ++events_;
    writer_.Add(event, event_offset);
  }
  if (after_comma && count == 0) return ErrorAt(from, "traceEvents: a comma with no event after it");
  return OkStatus();
}

void KinetoStreamReader::ReadSmallValue(std::string_view key, size_t from, size_t to) {
  // Parsed on its own, as the one element of an array: simdjson reads any value there.
  // Bytes that are not UTF-8 are read as U+FFFD (counted by the caller).
  std::string_view value(data() + from, to - from);
  std::optional<Utf8Repair> repair;
  if (!simdjson::validate_utf8(value)) value = repair.emplace(value).text();
  simdjson::padded_string text(value.size() + 2);
  text.data()[0] = '[';
  std::memcpy(text.data() + 1, value.data(), value.size());
  text.data()[value.size() + 1] = ']';
  ondemand::document doc;
  ondemand::array array;
  if (b_->parser.iterate(text).get(doc) != SUCCESS || doc.get_array().get(array) != SUCCESS) return;
  for (auto element : array) {
    ondemand::value value;
    if (element.get(value) == SUCCESS) ReadTopLevelField(key, value, rank_, &base_ns_);
    break;
  }
}

}  // namespace

Result<model::RankTrace> ImportKinetoStream(ChunkedSource& source, const std::string& name,
                                            const KinetoStreamOptions& options) {
  model::RankTrace rank;
  rank.path = name;
  rank.format = "kineto";
  // Kineto traces hold 200-350 bytes per event, up to two thirds of them host events and
  // a sixth or less on the GPU; a gzipped one decodes to ~10x its size. Reserved for the
  // dense case, not touched: no pages until used, and no copy when a table outgrows a
  // short guess (measured: 13 % fewer page faults on a 66 MB rank).
  uint64_t decoded_guess = source.file_bytes() * (source.gzipped() ? 10 : 1);
  // Dropping host events keeps about one launch call per GPU activity.
  rank.host.Reserve(decoded_guess / (options.drop_host_events ? 1000 : 250));
  rank.gpu.Reserve(decoded_guess / 1000);
  WindowBuffers& buffers = t_buffers;
  buffers.Reset(std::max<size_t>(options.window_bytes, 64));
  KinetoStreamReader reader(&source, name, &rank, &buffers, options.drop_host_events);
  COMMLENS_RETURN_IF_ERROR(reader.Read());
  return rank;
}

}  // namespace commlens::importers::COMMLENS_SIMD_NS
