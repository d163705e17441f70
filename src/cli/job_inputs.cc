#include "cli/job_inputs.h"

#include <fmt/format.h>

#include <map>

#include "cli/progress.h"
#include "cli/verbs.h"

namespace commlens::cli {

void AddJobInputOptions(CLI::App* cmd, JobInputs* inputs) {
  cmd->add_option("traces", inputs->paths, "Trace files or directories holding them")
      ->required()
      ->type_name("TRACE_DIR_OR_FILES");
  cmd->add_flag("--strict", inputs->load.strict, "Fail when any file cannot be read (default: go on)");
  cmd->add_option("--threads", inputs->load.threads, "Worker threads (default: all hardware threads)");
  cmd->add_option_function<std::string>(
         "--align",
         [inputs](const std::string& mode) {
           static const std::map<std::string, model::AlignMode> kModes = {{"auto", model::AlignMode::kAuto},
                                                                          {"collectives", model::AlignMode::kCollectives},
                                                                          {"none", model::AlignMode::kNone}};
           inputs->load.align = kModes.at(mode);
         },
         "Clock alignment across ranks from matched collectives: auto (hosts only), collectives "
         "(every rank), none")
      ->check(CLI::IsMember({"auto", "collectives", "none"}))
      ->type_name("MODE")
      ->default_str("auto");
  cmd->add_option_function<std::string>(
         "--steps",
         [inputs](const std::string& text) {
           Result<std::vector<int64_t>> steps = analysis::ParseStepList(text);
           if (!steps.ok()) throw CLI::ValidationError(steps.status().message());
           inputs->steps = std::move(steps).value();
         },
         "Only these profiler steps: N, A-B, or a list (3,5-7); each must be in the traces. Default: every step, "
         "with warm-up steps (the leading ones over 1.5x the median step, any over 3x) shown but left out of the "
         "summary")
      ->type_name("STEPS");
}

std::optional<analysis::StepChoice> ChooseJobSteps(const JobInputs& inputs, const model::Trace& trace,
                                                   std::string_view verb) {
  Result<analysis::StepChoice> choice = analysis::ChooseSteps(trace, inputs.steps);
  if (!choice.ok()) {
    fmt::print(stderr, "commlens {}: {}\n", verb, choice.status().message());
    return std::nullopt;
  }
  return std::move(choice).value();
}

Result<model::Trace> LoadJob(const JobInputs& inputs, std::string_view verb, bool quiet) {
  importers::LoadProgress progress;
  importers::LoadOptions options = inputs.load;
  options.progress = &progress;
  Result<model::Trace> loaded = [&] {
    ProgressLine line(&progress, quiet);
    return importers::LoadTrace(inputs.paths, options);
  }();
  if (!loaded.ok()) fmt::print(stderr, "commlens {}: {}\n", verb, loaded.status().message());
  return loaded;
}

int ReportFailures(const model::Trace& trace, std::string_view verb) {
  for (const auto& f : trace.failures) fmt::print(stderr, "commlens {}: {}\n", verb, f.message);
  return trace.failures.empty() ? kExitOk : kExitPartial;
}

}  // namespace commlens::cli
