#include "bench/bench_config.h"

#include <gtest/gtest.h>

namespace commlens::bench {
namespace {

TEST(ParseByteSize, SuffixesArePowersOf1024) {
  EXPECT_EQ(*ParseByteSize("8"), 8);
  EXPECT_EQ(*ParseByteSize("1K"), 1024);
  EXPECT_EQ(*ParseByteSize("1k"), 1024);
  EXPECT_EQ(*ParseByteSize("16M"), 16ll << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1ll << 30);
  EXPECT_EQ(*ParseByteSize("8G"), 8ll << 30);
  EXPECT_EQ(*ParseByteSize("0.5M"), 512ll << 10);
  EXPECT_EQ(*ParseByteSize("64KB"), 64ll << 10);
  EXPECT_EQ(*ParseByteSize(" 2M "), 2ll << 20);
}

TEST(ParseByteSize, RejectsGarbageWithAMessage) {
  for (const char* bad : {"", "M", "12X", "1.5", "abc", "-8", "1T"}) {
    Result<int64_t> r = ParseByteSize(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseByteSize("12X").status().message().find("'12X'"), std::string::npos);
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(ParseDuration("60")->count(), 60000);
  EXPECT_EQ(ParseDuration("60s")->count(), 60000);
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("2m")->count(), 120000);
  EXPECT_EQ(ParseDuration("1.5s")->count(), 1500);
  EXPECT_EQ(ParseDuration("1h")->count(), 3600000);
  EXPECT_FALSE(ParseDuration("soon").ok());
  EXPECT_FALSE(ParseDuration("5 parsecs").ok());
}

TEST(SizeSweep, FactorLikeNcclTests) {
  std::vector<int64_t> s = SizeSweep(8, 1ll << 30, 2, 0);
  ASSERT_EQ(s.size(), 28u);  // 8 B .. 1 GiB
  EXPECT_EQ(s.front(), 8);
  EXPECT_EQ(s[1], 16);
  EXPECT_EQ(s.back(), 1ll << 30);
  EXPECT_EQ(SizeSweep(1024, 5000, 4, 0), (std::vector<int64_t>{1024, 4096}));
}

TEST(SizeSweep, StepBytesWhenFactorIsOne) {
  EXPECT_EQ(SizeSweep(1 << 20, 4 << 20, 1, 1 << 20),
            (std::vector<int64_t>{1 << 20, 2 << 20, 3 << 20, 4 << 20}));
}

TEST(SizeSweep, DegenerateInputsTerminate) {
  EXPECT_EQ(SizeSweep(0, 100, 2, 0), (std::vector<int64_t>{0}));
  EXPECT_TRUE(SizeSweep(100, 10, 2, 0).empty());
  EXPECT_EQ(SizeSweep(32, 32, 2, 0), (std::vector<int64_t>{32}));
}

TEST(DataTypes, NamesSizesAndExactLimits) {
  EXPECT_EQ(*DataTypeFromName("float"), DataType::kFloat);
  EXPECT_EQ(*DataTypeFromName("bf16"), DataType::kBfloat16);
  EXPECT_EQ(*DataTypeFromName("ncclFloat16"), DataType::kHalf);
  EXPECT_EQ(*DataTypeFromName("f8e4m3"), DataType::kFp8E4M3);
  EXPECT_FALSE(DataTypeFromName("quaternion").has_value());
  // Sizes agree with the model's table.
  for (int i = 0; i < static_cast<int>(DataType::kCount); ++i) {
    const DataTypeInfo& t = Info(static_cast<DataType>(i));
    EXPECT_EQ(t.size, model::DataTypeSize(t.name)) << t.name;
  }
  EXPECT_EQ(Info(DataType::kBfloat16).exact_limit, 256);
  EXPECT_EQ(Info(DataType::kHalf).exact_limit, 2048);
  EXPECT_EQ(Info(DataType::kFloat).exact_limit, 1 << 24);
}

TEST(RedOps, OnlyExactOperators) {
  EXPECT_EQ(*RedOpFromName("sum"), RedOp::kSum);
  EXPECT_EQ(*RedOpFromName("MIN"), RedOp::kMin);
  EXPECT_FALSE(RedOpFromName("avg").has_value());
  EXPECT_EQ(RedOpName(RedOp::kProd), "prod");
}

TEST(Validate, NamesTheOption) {
  BenchConfig c;
  EXPECT_TRUE(Validate(c).ok());
  c.iters = 0;
  EXPECT_NE(Validate(c).message().find("--iters"), std::string::npos);
  c = BenchConfig();
  c.min_bytes = 1 << 20;
  c.max_bytes = 1 << 10;
  EXPECT_NE(Validate(c).message().find("--maxbytes"), std::string::npos);
  c = BenchConfig();
  c.timeout = std::chrono::milliseconds(0);
  EXPECT_FALSE(Validate(c).ok());
}

TEST(FormatBytes, Human) {
  EXPECT_EQ(FormatBytes(8), "8 B");
  EXPECT_EQ(FormatBytes(64 << 10), "64 KiB");
  EXPECT_EQ(FormatBytes(1ll << 30), "1 GiB");
  EXPECT_EQ(FormatBytes(3 << 19), "1.5 MiB");
}

}  // namespace
}  // namespace commlens::bench
