// Nsight Systems reports (.nsys-rep) are read through their SQLite export. When a user
// passes a report, commlens runs `nsys export --type sqlite --include-blobs=true` itself
// (nsys from NSYS_HOME, else PATH), keeps the export beside the report as <name>.sqlite
// (reused while it is newer than the report), and says so in the rank's notes. A folder
// holding both a report and its export is read once, from the export.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace commlens::importers {

inline constexpr std::string_view kNsysReportSuffix = ".nsys-rep";

struct NsysExport {
  std::string sqlite;  // the export to read
  std::string note;    // what was done, for the report ("exported with ...", "cached ...")
};

// The nsys executable commlens would run (NSYS_HOME/bin/nsys, NSYS_HOME/nsys,
// NSYS_HOME/target-linux-x64/nsys, then nsys on PATH), or empty.
std::string FindNsys();

// The SQLite export of |report|, made when missing or older than the report. Fails,
// naming the report, when no nsys is found or the export fails (with nsys's last words).
Result<NsysExport> ExportNsysReport(const std::string& report);

}  // namespace commlens::importers
