// Nsight Systems reports (.nsys-rep) are read through their SQLite export. When a user
// passes a report, commlens runs `nsys export --type sqlite --include-blobs=true` itself
// (nsys from NSYS_HOME, else PATH) and says so in the rank's notes. A folder holding both
// a report and its export is read once, from the export.
//
// Where the export goes: nsys writes it into a private folder (mkdtemp, mode 0700) with
// its log, so no name is predictable, two reports of one name never meet, and nothing is
// opened through a link someone planted. The folder is made beside the report and the
// export, once complete, is renamed to <name>.sqlite there (kept: reused while it is newer
// than the report); when the report's folder is read-only, or COMMLENS_NSYS_KEEP_EXPORT=0,
// the folder is made in $TMPDIR and removed with everything in it after the import.
//
// nsys gets COMMLENS_NSYS_EXPORT_TIMEOUT seconds (default 600) to finish; then it and
// whatever it started (its process group) are stopped, and the report is a failure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/temp_dir.h"

namespace commlens::importers {

inline constexpr std::string_view kNsysReportSuffix = ".nsys-rep";
inline constexpr int kNsysExportTimeoutDefaultS = 600;

struct NsysExport {
  std::string sqlite;  // the export to read
  std::string note;    // what was done, for the report ("exported with ...", "read ...")
  // The private folder holding an export that is not kept; removed with this object,
  // so it must live until the import has read |sqlite|.
  std::optional<TempDir> scratch;
};

// The nsys executable commlens would run (NSYS_HOME/bin/nsys, NSYS_HOME/nsys,
// NSYS_HOME/target-linux-x64/nsys, then nsys on PATH), or empty.
std::string FindNsys();

// The SQLite export of |report|, made when missing or older than the report. Fails,
// naming the report, when no nsys is found, the export fails (with nsys's last words) or
// takes longer than the time limit, or a COMMLENS_NSYS_* setting is not understood.
Result<NsysExport> ExportNsysReport(const std::string& report);

}  // namespace commlens::importers
