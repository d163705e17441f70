// What every verb that reads a job's traces shares: the inputs and their options on the
// command line, and loading them with failures reported the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/step_choice.h"
#include "common/status.h"
#include "importers/trace_loader.h"
#include "model/trace.h"

namespace commlens::cli {

struct JobInputs {
  std::vector<std::string> paths;
  importers::LoadOptions load;
  std::vector<int64_t> steps;  // --steps, parsed; empty: the default
};

// The positional TRACES argument, --strict, --threads, --align and --steps.
void AddJobInputOptions(CLI::App* cmd, JobInputs* inputs);

// The steps the summary covers: --steps when given, else the warm-up rule
// (analysis/step_choice.h). A step the traces lack is a usage error: printed as
// "commlens VERB: ..." and nullopt returned (the verb exits 64).
std::optional<analysis::StepChoice> ChooseJobSteps(const JobInputs& inputs, const model::Trace& trace,
                                                   std::string_view verb);

// Loads the job, with a progress line on stderr when it is a terminal and not |quiet|;
// on failure prints "commlens VERB: <why>" to stderr.
Result<model::Trace> LoadJob(const JobInputs& inputs, std::string_view verb, bool quiet);

// After the output: names every file that failed on stderr; the exit code (0 or 2).
int ReportFailures(const model::Trace& trace, std::string_view verb);

}  // namespace commlens::cli
