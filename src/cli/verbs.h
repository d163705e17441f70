// Each verb of the commlens command lives in its own file and adds itself to the app.
// A verb's callback stores its exit code in |*exit_code|.
#pragma once

#include <CLI/CLI.hpp>

namespace commlens::cli {

void AddAnalyzeVerb(CLI::App& app, int* exit_code);
void AddBenchVerb(CLI::App& app, int* exit_code);
void AddReportVerb(CLI::App& app, int* exit_code);
void AddTopoVerb(CLI::App& app, int* exit_code);

}  // namespace commlens::cli
