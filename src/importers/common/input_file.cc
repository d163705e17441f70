#include "importers/common/input_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/file.h"
#include "common/strings.h"

namespace commlens::importers {

namespace {

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

InputBuffer CopyPadded(std::string_view bytes) {
  size_t capacity = bytes.size() + InputBuffer::kPadding;
  auto data = std::make_unique<char[]>(capacity);
  std::memcpy(data.get(), bytes.data(), bytes.size());
  std::memset(data.get() + bytes.size(), 0, InputBuffer::kPadding);
  return InputBuffer(std::move(data), bytes.size(), capacity);
}

// Inflates every gzip member of |bytes|. The output is sized from the last member's
// ISIZE trailer (uncompressed size mod 2^32) when plausible and grown when short.
Result<InputBuffer> Gunzip(std::string_view bytes, const std::string& name) {
  size_t guess = bytes.size() * 4;
  if (bytes.size() >= 4) {
    const auto* t = reinterpret_cast<const unsigned char*>(bytes.data() + bytes.size() - 4);
    size_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (static_cast<size_t>(t[3]) << 24);
    // The trailer of a cut or corrupt file can claim anything: trust it only within a
    // plausible ratio (trace JSON compresses ~10-20x); the buffer grows if short.
    if (isize >= bytes.size() / 2 && isize <= bytes.size() * 64) guess = isize;
  }
  size_t capacity = guess + InputBuffer::kPadding;
  auto out = std::make_unique<char[]>(capacity);
  size_t produced = 0;

  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return Error(name + ": cannot initialise zlib");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(0);
  size_t consumed = 0;
  while (true) {
    if (zs.avail_in == 0 && consumed < bytes.size()) {
      size_t chunk = std::min<size_t>(bytes.size() - consumed, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
      zs.avail_in = static_cast<uInt>(chunk);
      consumed += chunk;
    }
    if (capacity - InputBuffer::kPadding - produced == 0) {  // grow
      size_t new_capacity = (capacity - InputBuffer::kPadding) * 2 + InputBuffer::kPadding;
      auto bigger = std::make_unique<char[]>(new_capacity);
      std::memcpy(bigger.get(), out.get(), produced);
      out = std::move(bigger);
      capacity = new_capacity;
    }
    size_t room = std::min<size_t>(capacity - InputBuffer::kPadding - produced, 1u << 30);
    zs.next_out = reinterpret_cast<Bytef*>(out.get() + produced);
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    produced += room - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files are valid gzip).
      size_t offset = consumed - zs.avail_in;
      if (offset < bytes.size() && IsGzip(bytes.substr(offset))) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed >= bytes.size()) {
      inflateEnd(&zs);
      return Error(name + ": gzip data ends early (truncated file) after " +
                   std::to_string(bytes.size()) + " compressed bytes, " +
                   std::to_string(produced) + " bytes decoded");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      size_t offset = consumed - zs.avail_in;
      std::string why = zs.msg ? zs.msg : "corrupt data";
      inflateEnd(&zs);
      return Error(name + ": gzip error at compressed byte " + std::to_string(offset) + ": " + why);
    }
  }
  inflateEnd(&zs);
  std::memset(out.get() + produced, 0, InputBuffer::kPadding);
  return InputBuffer(std::move(out), produced, capacity);
}

}  // namespace

Result<InputFile> DecodeInput(std::string_view bytes, const std::string& name) {
  InputFile file;
  file.file_bytes = bytes.size();
  if (IsGzip(bytes)) {
    COMMLENS_ASSIGN_OR_RETURN(file.buffer, Gunzip(bytes, name));
    file.gzipped = true;
    return file;
  }
  if (EndsWith(name, ".gz"))
    return Error(name + ": named .gz but is not gzip data (no gzip magic at byte 0)");
  file.buffer = CopyPadded(bytes);
  return file;
}

Result<InputFile> ReadInputFile(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(ReadableFile f, ReadableFile::Open(path));
  // Read into a padded buffer directly: a plain JSON file needs no second copy.
  const size_t size = f.size();
  size_t capacity = size + InputBuffer::kPadding;
  auto data = std::make_unique<char[]>(capacity);
  Result<size_t> got = f.Read(data.get(), size);
  if (!got.ok()) return Error(path + ": " + got.status().message());
  if (*got != size)
    return Error(path + ": read " + std::to_string(*got) + " of its " + std::to_string(size) +
                 " bytes (did it shrink while being read?)");
  std::memset(data.get() + size, 0, InputBuffer::kPadding);
  std::string_view bytes(data.get(), size);
  if (IsGzip(bytes)) return DecodeInput(bytes, path);
  if (EndsWith(path, ".gz"))
    return Error(path + ": named .gz but is not gzip data (no gzip magic at byte 0)");
  InputFile file;
  file.file_bytes = size;
  file.buffer = InputBuffer(std::move(data), size, capacity);
  return file;
}

Result<std::string> ReadDecodedHead(const std::string& path, size_t n) {
  COMMLENS_ASSIGN_OR_RETURN(std::string bytes, ReadFileHead(path, n));
  if (!IsGzip(bytes)) {
    if (EndsWith(path, ".gz"))
      return Error(path + ": named .gz but is not gzip data (no gzip magic at byte 0)");
    return bytes;
  }
  std::string out(n, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return Error(path + ": cannot initialise zlib");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(n);
  inflate(&zs, Z_SYNC_FLUSH);  // whatever decodes: a head need not be a whole stream
  out.resize(n - zs.avail_out);
  inflateEnd(&zs);
  return out;
}

}  // namespace commlens::importers
