#include "importers/kineto/kineto_tokenizer.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define COMMLENS_SCAN_AVX2 1
#endif

namespace commlens::importers {

namespace {

struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

// Bit i of each mask: byte i of the 64-byte block at |p| is that character. '{' and '['
// differ only in bit 0x20, as do '}' and ']': one compare each after OR-ing it in.
struct PortableClassifier {
  static BlockMasks Classify(const char* p) {
    BlockMasks m{};
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), lower = _mm_set1_epi8(0x20);
    for (int i = 0; i < 4; ++i) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      __m128i folded = _mm_or_si128(v, lower);
      int shift = 16 * i;
      m.quote |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)))} << shift;
      m.backslash |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)))} << shift;
      m.open |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)))} << shift;
      m.close |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)))} << shift;
    }
#else
    for (int i = 0; i < 64; ++i) {
      uint64_t bit = uint64_t{1} << i;
      char c = p[i];
      if (c == '"') m.quote |= bit;
      else if (c == '\\') m.backslash |= bit;
      else if (c == '{' || c == '[') m.open |= bit;
      else if (c == '}' || c == ']') m.close |= bit;
    }
#endif
    return m;
  }
  // Bit i set: an odd number of bits at or below i are set in |x|.
  static uint64_t PrefixXor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
  }
};

#if COMMLENS_SCAN_AVX2
// The same masks from two 32-byte compares per character (about half the work), and
// the prefix XOR in one instruction.
struct Avx2Classifier {
  __attribute__((target("avx2"))) static BlockMasks Classify(const char* p) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
    const __m256i open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}'), lower = _mm256_set1_epi8(0x20);
    __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    auto mask = [](__m256i a, __m256i b) __attribute__((target("avx2"))) {
      return uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(a))} |
             uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(b))} << 32;
    };
    __m256i lo_folded = _mm256_or_si256(lo, lower), hi_folded = _mm256_or_si256(hi, lower);
    BlockMasks m;
    m.quote = mask(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote));
    m.backslash = mask(_mm256_cmpeq_epi8(lo, backslash), _mm256_cmpeq_epi8(hi, backslash));
    m.open = mask(_mm256_cmpeq_epi8(lo_folded, open), _mm256_cmpeq_epi8(hi_folded, open));
    m.close = mask(_mm256_cmpeq_epi8(lo_folded, close), _mm256_cmpeq_epi8(hi_folded, close));
    return m;
  }
  // The same prefix XOR as one carry-less multiply by all ones.
  __attribute__((target("pclmul"))) static uint64_t PrefixXor(uint64_t x) {
    __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)), _mm_set1_epi8(-1), 0);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
  }
};
#endif

}  // namespace

std::atomic<bool> g_portable_only{false};

void EventScanner::UsePortableOnly(bool on) { g_portable_only.store(on, std::memory_order_relaxed); }

void EventScanner::Scan(const char* data, size_t end, bool at_end) {
#if COMMLENS_SCAN_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  if (avx2 && !g_portable_only.load(std::memory_order_relaxed)) return ScanAvx2(data, end, at_end);
#endif
  ScanPortable(data, end, at_end);
}

#if COMMLENS_SCAN_AVX2
// flatten: the block loop and the AVX2 classifier are compiled into this one function.
__attribute__((target("avx2,pclmul"), flatten)) void EventScanner::ScanAvx2(const char* data, size_t end, bool at_end) {
  ScanBlocks<Avx2Classifier>(data, end, at_end);
}
#else
void EventScanner::ScanAvx2(const char* data, size_t end, bool at_end) { ScanPortable(data, end, at_end); }
#endif

void EventScanner::ScanPortable(const char* data, size_t end, bool at_end) {
  ScanBlocks<PortableClassifier>(data, end, at_end);
}

template <class Classifier>
void EventScanner::ScanBlocks(const char* data, size_t end, bool at_end) {
  alignas(64) char tail[64];
  while (close_ == kNotFound && pos_ < end) {
    const char* block = data + pos_;
    size_t n = end - pos_;
    if (n < 64) {
      if (!at_end) return;
      std::memset(tail, ' ', sizeof tail);
      std::memcpy(tail, block, n);
      block = tail;
    } else {
      n = 64;
    }
    BlockMasks m = Classifier::Classify(block);
    // Escapes are rare in traces: walk the backslashes one by one. A backslash escapes
    // the byte after it, itself included (a "\\" pair escapes nothing further).
    uint64_t escaped = escape_carry_ ? 1 : 0;
    escape_carry_ = false;
    uint64_t bs = m.backslash & ~escaped;
    while (bs) {
      int i = __builtin_ctzll(bs);
      if (i == 63) {
        escape_carry_ = true;
      } else {
        escaped |= uint64_t{2} << i;
        bs &= ~(uint64_t{2} << i);
      }
      bs &= bs - 1;
    }
    uint64_t quotes = m.quote & ~escaped;
    uint64_t inside = Classifier::PrefixXor(quotes) ^ in_string_;
    in_string_ = static_cast<uint64_t>(static_cast<int64_t>(inside) >> 63);
    uint64_t brackets = (m.open | m.close) & ~inside;
    if (n < 64) brackets &= (uint64_t{1} << n) - 1;
    while (brackets) {
      int i = __builtin_ctzll(brackets);
      brackets &= brackets - 1;
      if (m.open >> i & 1) {
        ++depth_;
      } else if (--depth_ == 0) {
        cut_ = pos_ + i + 1;
      } else if (depth_ < 0) {
        close_ = pos_ + i;
        pos_ += i + 1;
        return;
      }
    }
    pos_ += n;
  }
}

void EventScanner::Shift(size_t by) {
  pos_ -= by;
  if (cut_ != kNotFound) cut_ -= by;
  if (close_ != kNotFound) close_ -= by;
}

size_t ScanValue(const char* data, size_t from, size_t end, size_t* open_quote) {
  *open_quote = kNotFound;
  if (from >= end) return kNotFound;
  char first = data[from];
  if (first != '"' && first != '{' && first != '[') {
    for (size_t i = from; i < end; ++i) {
      char c = data[i];
      if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t') return i;
    }
    return kNotFound;
  }
  int64_t depth = 0;
  for (size_t i = from; i < end; ++i) {
    char c = data[i];
    if (c == '"') {
      const void* q = nullptr;
      size_t j = i + 1;
      while (true) {  // the closing quote: one not preceded by an odd run of backslashes
        q = std::memchr(data + j, '"', end - j);
        if (!q) {
          *open_quote = i;
          return kNotFound;
        }
        size_t at = static_cast<size_t>(static_cast<const char*>(q) - data);
        size_t k = at;
        while (k > i + 1 && data[k - 1] == '\\') --k;
        j = at + 1;
        if ((at - k) % 2 == 0) break;
      }
      i = j - 1;
      if (depth == 0) return j;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth <= 0) return i + 1;
    }
  }
  return kNotFound;
}

size_t UnclosedStringStart(const char* data, size_t from, size_t end) {
  bool in_string = false;
  size_t opened = kNotFound;
  for (size_t i = from; i < end; ++i) {
    if (in_string && data[i] == '\\') {
      ++i;
    } else if (data[i] == '"') {
      in_string = !in_string;
      if (in_string) opened = i;
    }
  }
  return in_string ? opened : kNotFound;
}

}  // namespace commlens::importers
