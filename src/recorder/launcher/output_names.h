// The names of the files in a recording folder (docs/recorder.md, "Output layout"):
//
//   <job>.<host>.samples.cltrace             the sampler: one per host (SamplesFileName)
//   <job>.rank<R>.<host>.<pid>.cltrace       the NCCL profiler plugin: one per NCCL process
//   <job>.rank<R>.<host>.<pid>.s<N>.cltrace  that process's recording session N (N >= 1)
//
// A part that is not known is left out ("rank3.<host>.<pid>.cltrace" without a job id,
// "<job>.<host>.<pid>.cltrace" without a rank). Job ids and host names keep to
// [A-Za-z0-9._-]; any other character becomes '_', as in the sampler's names. The plugin
// (recording_session.cc) and `commlens record` (live metrics) both use these functions.
#pragma once

#include <string>
#include <string_view>

namespace commlens::recorder::launcher {

inline constexpr std::string_view kTraceSuffix = ".cltrace";

// |text| with every character outside [A-Za-z0-9._-] replaced by '_'.
std::string FileNamePart(std::string_view text);

// The plugin's trace file name; |rank| < 0 and an empty |job| are left out, session 0 has
// no suffix.
std::string PluginTraceFileName(std::string_view job, int rank, std::string_view host, long pid,
                                int session);

// True when |file_name| is a plugin trace of job |job| written on |host| (both as passed
// to PluginTraceFileName) by a process with a rank; the rank goes to |*rank|.
bool MatchPluginTrace(std::string_view file_name, std::string_view job, std::string_view host,
                      int* rank);

}  // namespace commlens::recorder::launcher
