// The native trace framing: checksums, the header, and how the reader treats a file that
// ends inside a record or has a damaged one.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "native_format/crc32.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"
#include "native_format/record_writer.h"

namespace commlens::native_format {
namespace {

TEST(Crc32Test, MatchesZlibCheckValues) {
  EXPECT_EQ(Crc32("", 0), 0u);
  EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u);  // the standard check value
  EXPECT_EQ(Crc32("The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
  // Chaining over two pieces equals one pass.
  EXPECT_EQ(Crc32("6789", 4, Crc32("12345", 5)), 0xCBF43926u);
}

std::vector<uint8_t> SampleFile() {
  RecordWriter w;
  w.AppendFileHeader();
  w.AppendString(1, "AllReduce");
  MarkRecord m{};
  m.time_ns = 42;
  m.what = static_cast<uint32_t>(MarkKind::kCaptureStart);
  w.Append(RecordType::kMark, m);
  EndRecord e{};
  e.time_ns = 43;
  w.Append(RecordType::kEnd, e);
  return w.bytes();
}

// Reads every record; returns the types seen and the final status.
ReadStatus ReadAll(std::span<const uint8_t> file, std::vector<uint16_t>* types) {
  FileHeader h;
  std::string why;
  EXPECT_TRUE(ParseFileHeader(file, &h, &why)) << why;
  RecordReader reader(file, h.header_size);
  RecordView r;
  ReadStatus s;
  while ((s = reader.Next(&r)) == ReadStatus::kRecord) types->push_back(r.type);
  return s;
}

TEST(NativeFormatTest, WriterAndReaderAgree) {
  std::vector<uint8_t> file = SampleFile();
  FileHeader h;
  std::string why;
  ASSERT_TRUE(ParseFileHeader(file, &h, &why)) << why;
  EXPECT_EQ(h.version_major, kVersionMajor);
  EXPECT_EQ(h.header_size, sizeof(FileHeader));
  RecordReader reader(file, h.header_size);
  RecordView r;
  ASSERT_EQ(reader.Next(&r), ReadStatus::kRecord);
  EXPECT_EQ(r.type, static_cast<uint16_t>(RecordType::kString));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r.payload.data()) + 4, r.payload.size() - 4), "AllReduce");
  ASSERT_EQ(reader.Next(&r), ReadStatus::kRecord);
  MarkRecord m;
  ASSERT_TRUE(DecodePayload(r, &m));
  EXPECT_EQ(m.time_ns, 42);
  ASSERT_EQ(reader.Next(&r), ReadStatus::kRecord);
  EXPECT_EQ(r.type, static_cast<uint16_t>(RecordType::kEnd));
  EXPECT_EQ(reader.Next(&r), ReadStatus::kEnd);
}

TEST(NativeFormatTest, EveryCutInsideARecordIsTruncationNotCorruption) {
  const std::vector<uint8_t> file = SampleFile();
  std::vector<size_t> boundaries;
  {
    std::vector<uint16_t> types;
    FileHeader h;
    std::string why;
    ParseFileHeader(file, &h, &why);
    RecordReader reader(file, h.header_size);
    RecordView r;
    boundaries.push_back(reader.offset());
    while (reader.Next(&r) == ReadStatus::kRecord) boundaries.push_back(reader.offset());
  }
  for (size_t cut = sizeof(FileHeader); cut <= file.size(); ++cut) {
    std::vector<uint16_t> types;
    ReadStatus s = ReadAll(std::span(file.data(), cut), &types);
    bool at_boundary = std::find(boundaries.begin(), boundaries.end(), cut) != boundaries.end();
    EXPECT_EQ(s, at_boundary ? ReadStatus::kEnd : ReadStatus::kTruncated) << "cut at " << cut;
    // Records before the cut are all there.
    size_t complete = 0;
    while (complete + 1 < boundaries.size() && boundaries[complete + 1] <= cut) ++complete;
    EXPECT_EQ(types.size(), complete) << "cut at " << cut;
  }
}

TEST(NativeFormatTest, DamagedRecordStopsReadingAsCorrupt) {
  std::vector<uint8_t> file = SampleFile();
  file[sizeof(FileHeader) + 14] ^= 0x01;  // inside the first record's payload
  std::vector<uint16_t> types;
  EXPECT_EQ(ReadAll(file, &types), ReadStatus::kCorrupt);
  EXPECT_TRUE(types.empty());
}

TEST(NativeFormatTest, DamagedLastRecordIsATornWrite) {
  std::vector<uint8_t> file = SampleFile();
  file[file.size() - 1] ^= 0x80;
  std::vector<uint16_t> types;
  EXPECT_EQ(ReadAll(file, &types), ReadStatus::kTruncated);
  EXPECT_EQ(types.size(), 2u);
}

TEST(NativeFormatTest, ZeroTailIsTruncation) {
  std::vector<uint8_t> file = SampleFile();
  file.resize(file.size() + 4096, 0);  // a crash that kept the size but lost the data
  std::vector<uint16_t> types;
  EXPECT_EQ(ReadAll(file, &types), ReadStatus::kTruncated);
  EXPECT_EQ(types.size(), 3u);
}

TEST(NativeFormatTest, HeaderErrorsSayWhy) {
  std::vector<uint8_t> file = SampleFile();
  FileHeader h;
  std::string why;
  EXPECT_FALSE(ParseFileHeader(std::span(file.data(), 10), &h, &why));
  EXPECT_NE(why.find("shorter"), std::string::npos);
  std::vector<uint8_t> bad_magic = file;
  bad_magic[1] = 'X';
  EXPECT_FALSE(ParseFileHeader(bad_magic, &h, &why));
  EXPECT_NE(why.find("magic"), std::string::npos);
  std::vector<uint8_t> bad_crc = file;
  bad_crc[20] = 1;
  EXPECT_FALSE(ParseFileHeader(bad_crc, &h, &why));
  EXPECT_NE(why.find("checksum"), std::string::npos);
}

TEST(NativeFormatTest, NewerMajorVersionIsRefused) {
  RecordWriter w;
  w.AppendFileHeader();
  std::vector<uint8_t> file = w.bytes();
  FileHeader h;
  std::memcpy(&h, file.data(), sizeof(h));
  h.version_major = kVersionMajor + 1;
  h.crc32 = Crc32(&h, offsetof(FileHeader, crc32));
  std::memcpy(file.data(), &h, sizeof(h));
  std::string why;
  EXPECT_FALSE(ParseFileHeader(file, &h, &why));
  EXPECT_NE(why.find("not supported"), std::string::npos);
}

TEST(NativeFormatTest, PayloadsGrowForwardCompatibly) {
  // A later minor version appends fields: the reader takes the prefix it knows.
  struct Longer {
    MarkRecord known;
    uint64_t added;
  } longer{{7, 3, 0, 0}, 99};
  RecordWriter w;
  w.Append(RecordType::kMark, longer);
  RecordReader reader(w.bytes(), 0);
  RecordView r;
  ASSERT_EQ(reader.Next(&r), ReadStatus::kRecord);
  MarkRecord m;
  ASSERT_TRUE(DecodePayload(r, &m));
  EXPECT_EQ(m.time_ns, 7);
  EXPECT_EQ(m.what, 3u);
  // Shorter than the 1.0 layout: refused.
  RecordWriter w2;
  uint32_t tiny = 5;
  w2.Append(RecordType::kMark, tiny);
  RecordReader reader2(w2.bytes(), 0);
  ASSERT_EQ(reader2.Next(&r), ReadStatus::kRecord);
  EXPECT_FALSE(DecodePayload(r, &m));
}

}  // namespace
}  // namespace commlens::native_format
