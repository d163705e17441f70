// What every verb that reads a job's traces shares: the inputs and their options on the
// command line, and loading them with failures reported the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "importers/trace_loader.h"
#include "model/trace.h"

namespace commlens::cli {

struct JobInputs {
  std::vector<std::string> paths;
  importers::LoadOptions load;
};

// The positional TRACES argument, --strict and --threads.
void AddJobInputOptions(CLI::App* cmd, JobInputs* inputs);

// Loads the job, with a progress line on stderr when it is a terminal and not |quiet|;
// on failure prints "commlens VERB: <why>" to stderr.
Result<model::Trace> LoadJob(const JobInputs& inputs, std::string_view verb, bool quiet);

// After the output: names every file that failed on stderr; the exit code (0 or 2).
int ReportFailures(const model::Trace& trace, std::string_view verb);

}  // namespace commlens::cli
