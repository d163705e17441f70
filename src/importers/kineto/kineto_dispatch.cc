// simdjson's on-demand parser is compiled for one instruction set: the one the compiler
// targets. So that one binary runs everywhere and still parses at full speed on a modern
// x86-64 CPU, the Kineto parser is compiled twice (kineto_event_parser.cc,
// kineto_metadata_parser.cc, kineto_importer.cc and kineto_stream_importer.cc, with COMMLENS_SIMD_NS=haswell and with COMMLENS_SIMD_NS=generic)
// and this file picks the copy the running CPU supports.
#include "importers/kineto/kineto_importer.h"

namespace commlens::importers {

#if COMMLENS_KINETO_HASWELL
namespace haswell {
Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name);
Result<model::RankTrace> ImportKinetoStream(ChunkedSource& source, const std::string& name,
                                            const KinetoStreamOptions& options);
}
#endif
namespace generic {
Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name);
Result<model::RankTrace> ImportKinetoStream(ChunkedSource& source, const std::string& name,
                                            const KinetoStreamOptions& options);
}

namespace {
bool CpuHasHaswellFeatures() {
#if COMMLENS_KINETO_HASWELL
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                          __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
  return has;
#else
  return false;
#endif
}
}  // namespace

Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name) {
#if COMMLENS_KINETO_HASWELL
  if (CpuHasHaswellFeatures()) return haswell::ImportKinetoTrace(input, name);
#endif
  return generic::ImportKinetoTrace(input, name);
}

Result<model::RankTrace> StreamKinetoTrace(ChunkedSource& source, const std::string& name,
                                           const KinetoStreamOptions& options) {
#if COMMLENS_KINETO_HASWELL
  if (CpuHasHaswellFeatures()) return haswell::ImportKinetoStream(source, name, options);
#endif
  return generic::ImportKinetoStream(source, name, options);
}

Result<model::RankTrace> StreamKinetoTrace(const std::string& path, const KinetoStreamOptions& options) {
  COMMLENS_ASSIGN_OR_RETURN(ChunkedSource source, ChunkedSource::Open(path));
  return StreamKinetoTrace(source, path, options);
}

}  // namespace commlens::importers
