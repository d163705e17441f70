#include "distributed/messages.h"

#include <fmt/format.h>

#include <cstring>

#include "common/byte_codec.h"

namespace commlens::distributed {

namespace {

// An empty message with room for its first fields (which also keeps GCC 12 from a false
// -Wstringop-overflow on the first insert into an empty vector).
std::vector<uint8_t> NewMessage() {
  std::vector<uint8_t> bytes;
  bytes.reserve(256);
  return bytes;
}

}  // namespace

std::vector<uint8_t> EncodeSteps(const std::vector<importers::ImportedFile>& files) {
  std::vector<uint8_t> bytes = NewMessage();
  ByteWriter out(&bytes);
  uint64_t ranks = 0;
  for (const importers::ImportedFile& f : files) ranks += f.ranks.size();
  out.Pod(ranks);
  for (const importers::ImportedFile& f : files)
    for (const model::RankTrace& r : f.ranks) {
      out.Count(r.steps.size());
      for (const model::ProfilerStep& s : r.steps) {
        out.Pod(s.number);
        out.Pod(s.start);
        out.Pod(s.end);
      }
    }
  return bytes;
}

bool DecodeSteps(std::span<const uint8_t> bytes, RankSteps* out) {
  ByteReader in(bytes, "steps");
  const size_t ranks = in.Count(sizeof(uint64_t));  // each rank's count of steps
  for (size_t r = 0; r < ranks && in.ok(); ++r) {
    std::vector<model::ProfilerStep>& steps = out->emplace_back();
    const size_t n = in.Count(3 * sizeof(uint64_t));
    for (size_t k = 0; k < n && in.ok(); ++k) {
      model::ProfilerStep& s = steps.emplace_back();
      s.number = in.Pod<int64_t>();
      s.start = in.Pod<model::TimeNs>();
      s.end = in.Pod<model::TimeNs>();
    }
  }
  return in.ok() && in.left() == 0;
}

std::vector<uint8_t> EncodeChoice(const Result<analysis::StepChoice>& choice) {
  std::vector<uint8_t> bytes = NewMessage();
  ByteWriter out(&bytes);
  out.Pod(uint64_t{choice.ok() ? 0u : 1u});
  if (!choice.ok()) {
    out.Str(choice.status().message());
    return bytes;
  }
  out.Pod(uint64_t{choice->selected_by_user});
  out.Count(choice->steps.size());
  for (const analysis::StepChoice::Step& s : choice->steps) {
    const auto& [number, length, left_out, cut] = s;  // a field added and not sent stops the build
    out.Pod(number);
    out.Pod(length);
    out.Str(left_out);
    out.Pod(uint64_t{cut});
  }
  return bytes;
}

Result<analysis::StepChoice> DecodeChoice(std::span<const uint8_t> bytes) {
  const std::string damaged = "internal: the steps from rank 0 are damaged";
  ByteReader in(bytes, "the steps from rank 0");
  if (in.Pod<uint64_t>() != 0) {
    std::string error = in.Str();
    return Error(in.ok() ? error : damaged);
  }
  analysis::StepChoice c;
  c.selected_by_user = in.Pod<uint64_t>() != 0;
  const size_t n = in.Count(4 * sizeof(uint64_t));  // number, length, the reason's length, cut
  for (size_t k = 0; k < n && in.ok(); ++k) {
    analysis::StepChoice::Step& s = c.steps.emplace_back();
    s.number = in.Pod<int64_t>();
    s.length = in.Pod<model::TimeNs>();
    s.left_out = in.Str();
    s.cut = in.Pod<uint64_t>() != 0;
  }
  if (!in.ok()) return Error(damaged);
  return c;
}

std::vector<uint8_t> EncodeFile(uint64_t file, const SummarizedFile& f) {
  std::vector<uint8_t> bytes = NewMessage();
  ByteWriter out(&bytes);
  out.Pod(file);
  out.Pod(uint64_t{0});  // the payload's size, once known
  out.Str(f.error);
  out.Count(f.ranks.size());
  for (const analysis::RankSummary& r : f.ranks) {
    const size_t length_at = bytes.size();
    out.Pod(uint64_t{0});
    analysis::EncodeRankSummary(r, &bytes);
    const uint64_t length = bytes.size() - length_at - sizeof(uint64_t);
    std::memcpy(bytes.data() + length_at, &length, sizeof length);
  }
  const uint64_t payload = bytes.size() - kFileHeader;
  std::memcpy(bytes.data() + sizeof(uint64_t), &payload, sizeof payload);
  return bytes;
}

bool ReadFileHeader(std::span<const uint8_t> message, uint64_t* file, uint64_t* payload) {
  if (message.size() < kFileHeader) return false;
  std::memcpy(file, message.data(), sizeof *file);
  std::memcpy(payload, message.data() + sizeof *file, sizeof *payload);
  return true;
}

SummarizedFile DecodeFile(std::span<const uint8_t> payload, const std::string& path, int from) {
  auto damaged = [&](const std::string& why) {
    return SummarizedFile{fmt::format("{}: imported by MPI process {} but not received whole: {}", path, from, why), {}};
  };
  SummarizedFile f;
  ByteReader in(payload, "the file's message");
  f.error = in.Str();
  const size_t ranks = in.Count(sizeof(uint64_t));
  for (size_t k = 0; k < ranks && in.ok(); ++k) {
    const std::span<const uint8_t> encoded = in.View(in.Count(1));
    if (!in.ok()) break;
    Result<analysis::RankSummary> r = analysis::DecodeRankSummary(encoded);
    if (!r.ok()) return damaged(r.status().message());
    f.ranks.push_back(std::move(r).value());
  }
  if (!in.ok()) return damaged(in.error());
  return f;
}

std::vector<uint8_t> EncodeQuestion(const DoingAtQuestion& q) {
  std::vector<uint8_t> bytes = NewMessage();
  ByteWriter out(&bytes);
  out.Pod(q.file);
  out.Pod(q.part);
  out.Pod(q.input_bytes);
  out.Pod(q.time);
  return bytes;
}

bool DecodeQuestion(std::span<const uint8_t> bytes, DoingAtQuestion* q) {
  ByteReader in(bytes, "the question from rank 0");
  q->file = in.Pod<uint64_t>();
  q->part = in.Pod<uint64_t>();
  q->input_bytes = in.Pod<uint64_t>();
  q->time = in.Pod<model::TimeNs>();
  return in.ok();
}

}  // namespace commlens::distributed
