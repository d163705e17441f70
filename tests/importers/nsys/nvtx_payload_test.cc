// The NVTX payload decoder on blobs copied from the real exports in
// examples/traces/nsys-1gpu (NVTX_EVENTS.binaryData, as hex), read with those exports' NCCL
// schemas, and what ReadNcclFields makes of them. Then the same blobs damaged: a header,
// payload or entry outside the blob, or an unknown schema, is an error with a message.
#include "importers/nsys/nvtx_payload.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "importers/nsys/nccl_calls.h"

namespace commlens::importers::nsys {
namespace {

// NVTX_PAYLOAD_ENTRY_TYPE_* that NCCL's schemas use.
constexpr uint64_t kInt = 5;
constexpr uint64_t kUint64 = 18;
constexpr uint64_t kSize = 22;

constexpr int64_t kNcclDomain = 1;  // NVTX_EVENTS.domainId of "NCCL" in the exports
constexpr uint64_t kReductionOp = 16777236;

// Schema ids NCCL registered in the exports (NVTX_PAYLOAD_SCHEMAS).
constexpr uint64_t kCommDestroy = 16777218;
constexpr uint64_t kAllGather = 16777220;
constexpr uint64_t kAllReduce = 16777221;
constexpr uint64_t kBroadcast = 16777222;
constexpr uint64_t kSend = 16777225;
constexpr uint64_t kRecv = 16777226;
constexpr uint64_t kCommInit = 16777227;
constexpr uint64_t kCommFinalize = 16777230;
constexpr uint64_t kAllToAll = 16777232;

// NVTX_PAYLOAD_SCHEMA_ENTRIES and the enum of the ddp and moe exports.
const PayloadSchemas& NcclSchemas() {
  static const PayloadSchemas schemas = [] {
    PayloadSchemas s;
    const PayloadEntry comm{"NCCL communicator ID", kUint64, 0};
    const PayloadEntry bytes{"Message size [bytes]", kSize, 8};
    for (uint64_t id : {kCommDestroy, kCommInit}) {
      s.AddEntry(kNcclDomain, id, comm);
      s.AddEntry(kNcclDomain, id, {"No. of ranks", kInt, 8});
      s.AddEntry(kNcclDomain, id, {"Rank", kInt, 12});
      s.AddEntry(kNcclDomain, id, {"CUDA device", kInt, 16});
    }
    s.AddEntry(kNcclDomain, kCommFinalize, comm);
    for (uint64_t id : {kAllGather, kAllReduce, kBroadcast, kSend, kRecv, kAllToAll}) {
      s.AddEntry(kNcclDomain, id, comm);
      s.AddEntry(kNcclDomain, id, bytes);
    }
    s.AddEntry(kNcclDomain, kAllReduce, {"Reduction operation", kReductionOp, 16});
    s.AddEntry(kNcclDomain, kBroadcast, {"Root", kInt, 16});
    s.AddEntry(kNcclDomain, kSend, {"Peer rank", kInt, 16});
    s.AddEntry(kNcclDomain, kRecv, {"Peer rank", kInt, 16});
    s.AddEnum(kNcclDomain, kReductionOp, 4);
    const char* ops[] = {"Sum", "Product", "Max", "Min", "Avg"};
    for (int64_t v = 0; v < 5; ++v) s.AddEnumValue(kNcclDomain, kReductionOp, v, ops[v]);
    return s;
  }();
  return schemas;
}

// Real blobs: one payload each (count 1; schema id, 24 or fewer bytes, at offset 32).
// ddp: ncclAllReduce of 201539584 bytes, Sum.
constexpr std::string_view kDdpAllReduce =
    "0100000000000000050000010000000018000000000000002000000000000000"
    "B4A69BF0BE79888E0040030C000000000000000000000000";
// ddp: ncclAllReduce of 33579008 bytes; the 4 bytes after the op are padding, not zero.
constexpr std::string_view kDdpAllReducePadded =
    "0100000000000000050000010000000018000000000000002000000000000000"
    "B4A69BF0BE79888E00600002000000000000000000000000417F0000";
// ddp: ncclBroadcast of 196 bytes from root 0.
constexpr std::string_view kDdpBroadcast =
    "0100000000000000060000010000000018000000000000002000000000000000"
    "B4A69BF0BE79888EC4000000000000000000000000000000";
// ddp: ncclAllGather of 8 bytes per rank.
constexpr std::string_view kDdpAllGather =
    "0100000000000000040000010000000010000000000000002000000000000000"
    "B4A69BF0BE79888E0800000000000000";
// moe: ncclCommInitRankConfig, 1 rank, rank 0, device 0.
constexpr std::string_view kMoeCommInit =
    "01000000000000000B0000010000000018000000000000002000000000000000"
    "F29D161EED23947001000000000000000000000000000000";
// moe: ncclCommFinalize (the communicator id only).
constexpr std::string_view kMoeCommFinalize =
    "01000000000000000E0000010000000008000000000000002000000000000000"
    "5E3CA9DFBD2FCCA7";
// moe: ncclSend of 16777216 bytes to peer 0 (then 4 bytes of padding).
constexpr std::string_view kMoeSend =
    "0100000000000000090000010000000018000000000000002000000000000000"
    "5E3CA9DFBD2FCCA7000000010000000000000000DA020000";
// moe: ncclRecv of 32768 bytes from peer 0.
constexpr std::string_view kMoeRecv =
    "01000000000000000A0000010000000018000000000000002000000000000000"
    "5E3CA9DFBD2FCCA7008000000000000000000000DA020000";
// moe: ncclAlltoAll of 8 bytes per rank.
constexpr std::string_view kMoeAllToAll =
    "0100000000000000100000010000000010000000000000002000000000000000"
    "5E3CA9DFBD2FCCA70800000000000000";

constexpr uint64_t kDdpComm = 0x8E8879BEF09BA6B4;
constexpr uint64_t kMoeInitComm = 0x709423ED1E169DF2;
constexpr uint64_t kMoeComm = 0xA7CC2FBDDFA93C5E;

std::string Bytes(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// |blob| with the little-endian word at byte |at| replaced by |value|.
std::string WithWord(std::string blob, size_t at, uint64_t value) {
  std::memcpy(blob.data() + at, &value, 8);
  return blob;
}

// Header words of a one-payload blob.
constexpr size_t kCountAt = 0;
constexpr size_t kSchemaAt = 8;
constexpr size_t kSizeAt = 16;
constexpr size_t kOffsetAt = 24;

struct Decoded {
  Status status;
  std::vector<PayloadField> fields;

  // The field named |name|; fails the test when there is none.
  PayloadField Field(std::string_view name) const {
    for (const PayloadField& f : fields)
      if (f.name == name) return f;
    ADD_FAILURE() << "no field '" << name << "'";
    return {};
  }
};

Decoded Decode(const std::string& blob, int64_t domain = kNcclDomain,
               const PayloadSchemas& schemas = NcclSchemas()) {
  Decoded d;
  d.status = DecodePayload(blob, domain, schemas, &d.fields);
  return d;
}

NcclRange ReadRange(std::string_view hex) {
  Decoded d = Decode(Bytes(hex));
  EXPECT_TRUE(d.status.ok()) << d.status.message();
  NcclRange r;
  ReadNcclFields(d.fields, &r);
  return r;
}

// The decoding failed, and its message says |what|.
void ExpectError(const Decoded& d, std::string_view what) {
  EXPECT_FALSE(d.status.ok());
  EXPECT_NE(d.status.message().find(what), std::string::npos) << d.status.message();
}

TEST(NvtxPayload, AllReduceHasCommunicatorSizeAndOp) {
  Decoded d = Decode(Bytes(kDdpAllReduce));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  ASSERT_EQ(d.fields.size(), 3u);
  EXPECT_EQ(static_cast<uint64_t>(d.Field("NCCL communicator ID").value), kDdpComm);
  EXPECT_EQ(d.Field("Message size [bytes]").value, 201539584);
  EXPECT_EQ(d.Field("Reduction operation").value, 0);
  EXPECT_EQ(d.Field("Reduction operation").enum_name, "Sum");
  EXPECT_FALSE(d.Field("Message size [bytes]").is_real);
}

TEST(NvtxPayload, PaddingAfterALastFieldIsNotRead) {
  Decoded d = Decode(Bytes(kDdpAllReducePadded));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.Field("Message size [bytes]").value, 33579008);
  EXPECT_EQ(d.Field("Reduction operation").value, 0);  // 4 bytes: the 0x7F41 after is padding
  EXPECT_EQ(d.Field("Reduction operation").enum_name, "Sum");
}

TEST(NvtxPayload, SendAndRecvHavePeer) {
  Decoded send = Decode(Bytes(kMoeSend));
  ASSERT_TRUE(send.status.ok()) << send.status.message();
  EXPECT_EQ(static_cast<uint64_t>(send.Field("NCCL communicator ID").value), kMoeComm);
  EXPECT_EQ(send.Field("Message size [bytes]").value, 16777216);
  EXPECT_EQ(send.Field("Peer rank").value, 0);  // an 8-byte read would take the padding in
  Decoded recv = Decode(Bytes(kMoeRecv));
  ASSERT_TRUE(recv.status.ok()) << recv.status.message();
  EXPECT_EQ(recv.Field("Message size [bytes]").value, 32768);
  EXPECT_EQ(recv.Field("Peer rank").value, 0);
}

TEST(NvtxPayload, CommInitHasRankCountAndRank) {
  Decoded d = Decode(Bytes(kMoeCommInit));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(static_cast<uint64_t>(d.Field("NCCL communicator ID").value), kMoeInitComm);
  EXPECT_EQ(d.Field("No. of ranks").value, 1);
  EXPECT_EQ(d.Field("Rank").value, 0);
  EXPECT_EQ(d.Field("CUDA device").value, 0);
  // The same blob as rank 3 of 8 on device 5: each int read from its own offset.
  std::string blob = Bytes(kMoeCommInit);
  const int32_t values[] = {8, 3, 5};
  std::memcpy(blob.data() + 40, values, sizeof values);
  Decoded edited = Decode(blob);
  ASSERT_TRUE(edited.status.ok()) << edited.status.message();
  EXPECT_EQ(edited.Field("No. of ranks").value, 8);
  EXPECT_EQ(edited.Field("Rank").value, 3);
  EXPECT_EQ(edited.Field("CUDA device").value, 5);
}

TEST(NvtxPayload, ShorterSchemas) {
  Decoded broadcast = Decode(Bytes(kDdpBroadcast));
  ASSERT_TRUE(broadcast.status.ok()) << broadcast.status.message();
  EXPECT_EQ(broadcast.Field("Message size [bytes]").value, 196);
  EXPECT_EQ(broadcast.Field("Root").value, 0);
  for (std::string_view hex : {kDdpAllGather, kMoeAllToAll}) {
    Decoded d = Decode(Bytes(hex));
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    ASSERT_EQ(d.fields.size(), 2u);
    EXPECT_EQ(d.Field("Message size [bytes]").value, 8);
  }
  Decoded finalize = Decode(Bytes(kMoeCommFinalize));
  ASSERT_TRUE(finalize.status.ok()) << finalize.status.message();
  ASSERT_EQ(finalize.fields.size(), 1u);
  EXPECT_EQ(static_cast<uint64_t>(finalize.fields[0].value), kMoeComm);
}

TEST(NvtxPayload, OpWithoutANameKeepsItsValue) {
  // NCCL numbers user-defined reduction ops from ncclNumOps (5) up.
  std::string blob = Bytes(kDdpAllReduce);
  blob[48] = 7;
  Decoded d = Decode(blob);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.Field("Reduction operation").value, 7);
  EXPECT_TRUE(d.Field("Reduction operation").enum_name.empty());
}

TEST(NvtxPayload, TwoPayloadsInOneBlob) {
  // A send's and a recv's payloads behind one header of two entries.
  std::string blob(8 + 2 * 24, '\0');
  blob = WithWord(blob, 0, 2);
  blob = WithWord(blob, 8, kSend);
  blob = WithWord(blob, 16, 24);
  blob = WithWord(blob, 24, 56);
  blob = WithWord(blob, 32, kRecv);
  blob = WithWord(blob, 40, 24);
  blob = WithWord(blob, 48, 80);
  blob += Bytes(kMoeSend).substr(32) + Bytes(kMoeRecv).substr(32);
  Decoded d = Decode(blob);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  ASSERT_EQ(d.fields.size(), 6u);
  EXPECT_EQ(d.fields[1].value, 16777216);
  EXPECT_EQ(d.fields[4].value, 32768);
}

TEST(NvtxPayload, NoPayloadsIsEmpty) {
  Decoded d = Decode(std::string(8, '\0'));
  EXPECT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_TRUE(d.fields.empty());
}

TEST(NvtxPayload, ScalarTypesAndEnumWidths) {
  PayloadSchemas s;
  const uint64_t kSchema = 16777300;
  s.AddEntry(7, kSchema, {"int8", 11, 0});
  s.AddEntry(7, kSchema, {"uint16", 14, 2});
  s.AddEntry(7, kSchema, {"float", 19, 4});
  s.AddEntry(7, kSchema, {"double", 20, 8});
  s.AddEntry(7, kSchema, {"one-byte enum", 16777301, 16});
  s.AddEntry(7, kSchema, {"three-byte enum", 16777302, 17});  // no C type has 3 bytes
  s.AddEntry(7, kSchema, {"string", 24, 0});                  // not decoded
  s.AddEnum(7, 16777301, 1);
  s.AddEnumValue(7, 16777301, -2, "minus two");
  s.AddEnum(7, 16777302, 3);
  std::string payload(24, '\0');
  payload[0] = static_cast<char>(-3);
  payload[2] = payload[3] = static_cast<char>(0xFF);
  const float f = 2.5f;
  const double big = 1e30;  // no int64 holds it
  std::memcpy(payload.data() + 4, &f, 4);
  std::memcpy(payload.data() + 8, &big, 8);
  payload[16] = static_cast<char>(-2);
  std::string blob(32, '\0');
  blob = WithWord(blob, kCountAt, 1);
  blob = WithWord(blob, kSchemaAt, kSchema);
  blob = WithWord(blob, kSizeAt, payload.size());
  blob = WithWord(blob, kOffsetAt, 32);
  Decoded d = Decode(blob + payload, 7, s);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  ASSERT_EQ(d.fields.size(), 5u);
  EXPECT_EQ(d.Field("int8").value, -3);
  EXPECT_EQ(d.Field("uint16").value, 65535);
  EXPECT_TRUE(d.Field("float").is_real);
  EXPECT_EQ(d.Field("float").real, 2.5);
  EXPECT_EQ(d.Field("float").value, 2);
  EXPECT_EQ(d.Field("double").real, 1e30);
  EXPECT_EQ(d.Field("double").value, 0);
  EXPECT_EQ(d.Field("one-byte enum").value, -2);
  EXPECT_EQ(d.Field("one-byte enum").enum_name, "minus two");
}

TEST(NvtxPayload, EveryCutOfARealBlobIsAnError) {
  for (std::string_view hex :
       {kDdpAllReduce, kDdpAllGather, kMoeCommInit, kMoeCommFinalize, kMoeSend}) {
    const std::string blob = Bytes(hex);
    for (size_t n = 0; n < blob.size(); ++n) {
      Decoded d = Decode(blob.substr(0, n));
      EXPECT_FALSE(d.status.ok()) << hex << " cut to " << n << " bytes";
      EXPECT_NE(d.status.message(), "OK");
    }
  }
}

TEST(NvtxPayload, HeaderOutsideTheBlob) {
  ExpectError(Decode(Bytes("0100000000")), "shorter than its 8-byte header");
  // Two payloads claimed; the second header would run past the 40-byte blob.
  ExpectError(Decode(WithWord(Bytes(kMoeCommFinalize), kCountAt, 2)),
              "header cut short at payload 1");
  // Two payloads claimed in a 56-byte blob: the first payload's bytes, read as the second
  // header, put a 201539584-byte payload at offset 0.
  ExpectError(Decode(WithWord(Bytes(kDdpAllReduce), kCountAt, 2)),
              "payload 1 (201539584 bytes at 0) lies outside the 56-byte blob");
}

TEST(NvtxPayload, PayloadOutsideTheBlob) {
  const std::string blob = Bytes(kDdpAllReduce);
  ExpectError(Decode(WithWord(blob, kOffsetAt, 57)), "lies outside the 56-byte blob");
  ExpectError(Decode(WithWord(blob, kOffsetAt, 33)), "lies outside the 56-byte blob");
  ExpectError(Decode(WithWord(blob, kOffsetAt, UINT64_MAX)), "lies outside the 56-byte blob");
  // A size that would wrap around when added to its offset.
  ExpectError(Decode(WithWord(blob, kSizeAt, UINT64_MAX - 7)), "lies outside the 56-byte blob");
}

TEST(NvtxPayload, HugeCountIsAnError) {
  const std::string blob = Bytes(kDdpAllReduce);
  ExpectError(Decode(WithWord(blob, kCountAt, uint64_t{1} << 63)),
              "claims 9223372036854775808 payloads");
  ExpectError(Decode(WithWord(blob, kCountAt, 1025)), "claims 1025 payloads");
  ExpectError(Decode(WithWord(blob, kCountAt, 1024)), "payload 1 (");
}

TEST(NvtxPayload, EntryOutsideItsPayload) {
  // The all-reduce's payload said to be 16 bytes: its op (4 bytes at 16) lies past it.
  ExpectError(Decode(WithWord(Bytes(kDdpAllReduce), kSizeAt, 16)),
              "payload entry 'Reduction operation' lies outside its payload");
}

TEST(NvtxPayload, UnknownSchemaIsAnError) {
  const std::string blob = Bytes(kDdpAllReduce);
  ExpectError(Decode(WithWord(blob, kSchemaAt, 16777299)),
              "payload schema 16777299 is not in the export");
  // A known id in a domain that did not register it.
  ExpectError(Decode(blob, 2), "payload schema 16777221 is not in the export");
  ExpectError(Decode(blob, 0), "payload schema 16777221 is not in the export");
  Decoded none = Decode(blob, kNcclDomain, PayloadSchemas());
  ExpectError(none, "is not in the export");
}

TEST(NvtxPayload, SchemaLookupKeepsDomainsApart) {
  // Ids chosen so that a lookup mixing domain and id into one 64-bit word (domain times
  // the golden-ratio constant, xor the id) finds domain 1's all-reduce from domain 0.
  const uint64_t mixed = 0x9E3779B97F4A7C15ull ^ kAllReduce;
  ExpectError(Decode(WithWord(Bytes(kDdpAllReduce), kSchemaAt, mixed), 0), "is not in the export");
}

TEST(NcclFields, FromDecodedPayloads) {
  NcclRange all_reduce = ReadRange(kDdpAllReduce);
  EXPECT_TRUE(all_reduce.has_payload);
  EXPECT_EQ(all_reduce.comm, kDdpComm);
  EXPECT_EQ(all_reduce.bytes, 201539584);
  EXPECT_EQ(all_reduce.root, -1);
  EXPECT_EQ(all_reduce.peer, -1);
  EXPECT_EQ(all_reduce.nranks, -1);

  NcclRange send = ReadRange(kMoeSend);
  EXPECT_EQ(send.comm, kMoeComm);
  EXPECT_EQ(send.bytes, 16777216);
  EXPECT_EQ(send.peer, 0);

  NcclRange broadcast = ReadRange(kDdpBroadcast);
  EXPECT_EQ(broadcast.root, 0);
  EXPECT_EQ(broadcast.bytes, 196);

  NcclRange init = ReadRange(kMoeCommInit);
  EXPECT_EQ(init.comm, kMoeInitComm);
  EXPECT_EQ(init.nranks, 1);
  EXPECT_EQ(init.rank, 0);
  EXPECT_EQ(init.bytes, -1);

  NcclRange finalize = ReadRange(kMoeCommFinalize);
  EXPECT_TRUE(finalize.has_payload);
  EXPECT_EQ(finalize.comm, kMoeComm);
  EXPECT_EQ(finalize.bytes, -1);
}

TEST(NcclFields, OutOfRangeValuesAreAbsent) {
  std::vector<PayloadField> fields(3);
  fields[0].name = "Message size [bytes]";
  fields[0].value = INT64_MIN;  // a size_t of 2^63 read as int64
  fields[1].name = "Rank";
  fields[1].value = int64_t{1} << 40;
  fields[2].name = "Peer";  // read like "Peer rank"
  fields[2].value = 6;
  NcclRange r;
  ReadNcclFields(fields, &r);
  EXPECT_EQ(r.bytes, -1);
  EXPECT_EQ(r.rank, -1);
  EXPECT_EQ(r.peer, 6);
}

}  // namespace
}  // namespace commlens::importers::nsys
