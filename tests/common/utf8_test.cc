// Finding and replacing bytes that are not UTF-8 (common/utf8.h): Unicode's maximal
// subparts, and positions in the repaired text mapped back to the original's.
#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace commlens {
namespace {

std::string Flaws(std::string_view text) {
  std::string s;
  for (const Utf8Flaw& f : FindUtf8Flaws(text)) s += std::to_string(f.at) + "+" + std::to_string(f.length) + " ";
  return s;
}

TEST(Utf8, WellFormedTextHasNoFlaws) {
  EXPECT_EQ(Flaws("plain ascii"), "");
  EXPECT_EQ(Flaws("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"), "");  // 2, 3, 4 bytes, U+10FFFF
}

// Unicode's "U+FFFD substitution of maximal subparts" (chapter 3, table 3-8).
TEST(Utf8, EachMaximalSubpartIsOneFlaw) {
  EXPECT_EQ(Flaws("a\xFF" "b"), "1+1 ");
  EXPECT_EQ(Flaws("\x80\x80"), "0+1 1+1 ");              // lone continuation bytes
  EXPECT_EQ(Flaws("\xC0\xAF"), "0+1 1+1 ");              // overlong lead: never valid
  EXPECT_EQ(Flaws("\xE2\x82x"), "0+2 ");                 // cut short: one flaw, then 'x'
  EXPECT_EQ(Flaws("\xE0\x80\x80"), "0+1 1+1 2+1 ");      // overlong 3-byte form
  EXPECT_EQ(Flaws("\xED\xA0\x80"), "0+1 1+1 2+1 ");      // a surrogate
  EXPECT_EQ(Flaws("\xF4\x90\x80\x80"), "0+1 1+1 2+1 3+1 ");  // above U+10FFFF
  EXPECT_EQ(Flaws("\xF0\x9F\x98"), "0+3 ");              // 4-byte character cut at the end
  EXPECT_EQ(Flaws("x\xF5"), "1+1 ");
}

TEST(Utf8, RepairReplacesAndMapsBack) {
  const std::string text = "ab\xFF" "cd\xE2\x82" "ef";
  Utf8Repair r(text, 8);
  EXPECT_EQ(r.text(), "ab\xEF\xBF\xBD" "cd\xEF\xBF\xBD" "ef");
  EXPECT_EQ(r.readable(), r.text().size() + 8);
  ASSERT_EQ(r.flaws().size(), 2u);
  EXPECT_EQ(FlawBytes(text, r.flaws()[1]), "0xE2 0x82");
  // a b U+FFFD(3) c d U+FFFD(3) e f
  const size_t expected[] = {0, 1, 2, 2, 2, 3, 4, 5, 5, 5, 7, 8};
  for (size_t i = 0; i < r.text().size(); ++i) EXPECT_EQ(r.Original(i), expected[i]) << i;
  EXPECT_EQ(Utf8Repair("clean").text(), "clean");
}

}  // namespace
}  // namespace commlens
