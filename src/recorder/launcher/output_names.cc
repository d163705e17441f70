#include "recorder/launcher/output_names.h"

#include <cctype>

namespace commlens::recorder::launcher {

namespace {

// Consumes a run of digits at the front of |s|; false when there is none.
bool TakeNumber(std::string_view* s, long* value) {
  size_t n = 0;
  long v = 0;
  while (n < s->size() && std::isdigit(static_cast<unsigned char>((*s)[n])) && n < 12)
    v = v * 10 + ((*s)[n++] - '0');
  if (n == 0) return false;
  *value = v;
  s->remove_prefix(n);
  return true;
}

bool TakePrefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::string FileNamePart(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::string PluginTraceFileName(std::string_view job, int rank, std::string_view host, long pid,
                                int session) {
  std::string name;
  if (!job.empty()) name += FileNamePart(job) + ".";
  if (rank >= 0) name += "rank" + std::to_string(rank) + ".";
  name += FileNamePart(host) + "." + std::to_string(pid);
  if (session > 0) name += ".s" + std::to_string(session);
  name += kTraceSuffix;
  return name;
}

bool MatchPluginTrace(std::string_view name, std::string_view job, std::string_view host,
                      int* rank) {
  std::string job_part;
  if (!job.empty()) job_part = FileNamePart(job) + ".";
  std::string host_part(1, '.');
  host_part += FileNamePart(host);
  host_part += '.';
  long r = 0;
  long pid = 0;
  if (!TakePrefix(&name, job_part) || !TakePrefix(&name, "rank") || !TakeNumber(&name, &r) ||
      !TakePrefix(&name, host_part) || !TakeNumber(&name, &pid))
    return false;
  if (TakePrefix(&name, ".s")) {
    long session = 0;
    if (!TakeNumber(&name, &session)) return false;
  }
  if (name != kTraceSuffix) return false;
  *rank = static_cast<int>(r);
  return true;
}

}  // namespace commlens::recorder::launcher
