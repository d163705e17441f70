// Sha256 against the FIPS 180-4 examples (NIST's "SHA256.pdf" and "SHA2_Additional.pdf"
// messages) and against itself fed in pieces, across every block boundary.
#include <gtest/gtest.h>

#include <string>

#include "common/sha256.h"

namespace commlens {
namespace {

std::string Hex(const Sha256::Digest& d) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(Hex(Sha256::Of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256::Of("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 448 bits: the padding needs a second block.
  EXPECT_EQ(Hex(Sha256::Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(Sha256::Of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopq"
                           "rlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Hex(Sha256::Of(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths either side of where the length field no longer fits the last block (56) and of
// the block size (64, 128).
TEST(Sha256, LengthsAroundTheBlockEdges) {
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& [n, hex] : cases) EXPECT_EQ(Hex(Sha256::Of(std::string(n, 'a'))), hex) << n << " bytes";
}

TEST(Sha256, PiecesHashAsTheWhole) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7 + 3);
  const Sha256::Digest whole = Sha256::Of(text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    Sha256 h;
    h.Update(std::string_view(text).substr(0, cut));
    h.Update(std::string_view(text).substr(cut, 1));
    h.Update(std::string_view(text).substr(std::min(cut + 1, text.size())));
    ASSERT_EQ(Hex(h.Finish()), Hex(whole)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace commlens
