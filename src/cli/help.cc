#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/verbs.h"

namespace commlens::cli {

namespace {

// Edits (insertions, deletions, substitutions, swaps of two neighbours) between a and b.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<int> HelpOrUnknownVerb(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (first.empty() || first[0] == '-') return std::nullopt;
  std::vector<std::string> verbs;
  for (const CLI::App* sub : app.get_subcommands({})) verbs.push_back(sub->get_name());
  auto unknown = [&](const std::string& word) {
    // A typo is a third of the word's letters away at most, or the start of one verb.
    std::string nearest;
    size_t best = std::max<size_t>(1, word.size() / 3) + 1;
    for (const std::string& v : verbs)
      if (size_t d = Distance(word, v); d < best) {
        best = d;
        nearest = v;
      }
    if (nearest.empty() && word.size() >= 2)
      for (const std::string& v : verbs)
        if (v.rfind(word, 0) == 0) nearest = nearest.empty() ? v : "-";
    if (nearest == "-") nearest.clear();  // the start of two verbs: no guess
    std::string list;
    for (const std::string& v : verbs) list += (list.empty() ? "" : ", ") + v;
    fmt::print(stderr, "commlens: '{}' is not a verb{} The verbs: {} ('commlens help VERB' says more).\n", word,
               nearest.empty() ? "." : fmt::format("; did you mean '{}'?", nearest), list);
    return kExitUsage;
  };
  if (first == "help") {
    if (argc == 2) {
      fmt::print("{}", app.help());
      return kExitOk;
    }
    const std::string verb = argv[2];
    for (CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == verb) {
        fmt::print("{}", sub->help(app.get_name()));
        return kExitOk;
      }
    return unknown(verb);
  }
  if (std::find(verbs.begin(), verbs.end(), first) != verbs.end()) return std::nullopt;
  return unknown(first);
}

}  // namespace commlens::cli
