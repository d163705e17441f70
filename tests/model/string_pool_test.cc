#include "model/string_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace commlens::model {
namespace {

TEST(StringPool, EmptyStringIsIdZero) {
  StringPool pool;
  EXPECT_EQ(pool.Intern("").value, 0u);
  EXPECT_EQ(pool.Get(StringId{}), "");
}

TEST(StringPool, InternsOnceAndViewsStayValid) {
  StringPool pool;
  StringId a = pool.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  std::string_view first = pool.Get(a);
  for (int i = 0; i < 200000; ++i) pool.Intern("kernel_" + std::to_string(i));  // several blocks
  std::string big(600000, 'x');                                                 // own block
  StringId b = pool.Intern(big);
  EXPECT_EQ(pool.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), a);
  EXPECT_EQ(first, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(pool.Get(b), big);
  EXPECT_EQ(pool.Get(pool.Intern("kernel_123")), "kernel_123");
  bool found = false;
  EXPECT_EQ(pool.Find("kernel_199999", &found), pool.Intern("kernel_199999"));
  EXPECT_TRUE(found);
  pool.Find("never", &found);
  EXPECT_FALSE(found);
}

}  // namespace
}  // namespace commlens::model
