// An Nsight Systems export as `nsys export --type sqlite` writes it without
// `--include-blobs=true`, made from a shipped sample exported with it: the one thing that
// option adds is the binary payload of each NVTX range (NVTX_EVENTS.binaryData, where
// NCCL's communicator, size and peer are); without it the column is there and NULL, while
// the payload schemas (NVTX_PAYLOAD_*), range names and every other table are the same.
// (Observed on a real export made without it: examples/traces/nsys-1gpu/wrap, 0 of 17,250
// NVTX rows with binaryData, the schema tables present.) docs/nsys.md says so.
#pragma once

#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace commlens::testing {

// Inflates the gzipped export |gz| to |out| and clears its NVTX payloads; "" or why not.
inline std::string WriteExportWithoutBlobs(const std::string& gz, const std::filesystem::path& out) {
  gzFile in = gzopen(gz.c_str(), "rb");
  if (!in) return gz + ": cannot open";
  {
    std::ofstream os(out, std::ios::binary);
    char buf[1 << 16];
    for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) os.write(buf, n);
  }
  gzclose(in);
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open(out.c_str(), &db) != SQLITE_OK) {
    error = out.string() + ": " + sqlite3_errmsg(db);
  } else {
    char* err = nullptr;
    if (sqlite3_exec(db, "UPDATE NVTX_EVENTS SET binaryData = NULL; VACUUM;", nullptr, nullptr, &err) != SQLITE_OK)
      error = out.string() + ": " + (err ? err : "UPDATE failed");
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return error;
}

}  // namespace commlens::testing
