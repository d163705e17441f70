// Each verb of the commlens command lives in its own file and adds itself to the app.
// A verb's callback stores its exit code in |*exit_code|.
//
// Exit codes every verb shares (docs: README "Exit codes"); bench and topo add their own
// between 1 and 63 (bench/errors.h, topo/check.h). record passes its command's exit code
// through and uses 125-127 for its own (recorder/launcher/record.h).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace commlens::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // analyze: nothing could be analyzed (or --strict)
inline constexpr int kExitPartial = 2;   // analyze: some files failed, the rest is reported
inline constexpr int kExitUsage = 64;    // the command line is wrong (BSD sysexits' EX_USAGE)

void AddAnalyzeVerb(CLI::App& app, int* exit_code);
void AddBenchVerb(CLI::App& app, int* exit_code);
void AddDiffVerb(CLI::App& app, int* exit_code);
void AddEnvVerb(CLI::App& app, int* exit_code);
void AddExportVerb(CLI::App& app, int* exit_code);
void AddRecordVerb(CLI::App& app, int* exit_code);
void AddReportVerb(CLI::App& app, int* exit_code);
void AddTopoVerb(CLI::App& app, int* exit_code);
void AddWhatIfVerb(CLI::App& app, int* exit_code);

// Before parsing: "commlens help" prints the verbs, "commlens help VERB" that verb's help
// (exit 0); a first argument that is neither an option nor a verb is a usage error that
// names the verbs, and the nearest one to a typo ("analyse": did you mean analyze?).
// nullopt: parse as usual.
std::optional<int> HelpOrUnknownVerb(CLI::App& app, int argc, char** argv);

}  // namespace commlens::cli
