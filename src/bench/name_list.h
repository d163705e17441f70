// Lists of names from repeatable, comma-separated options (--backend nccl,nvshmem,
// --variant all): in the order given, duplicates dropped, "all" meaning every value of
// the enum. Shared by backend.h and jacobi_config.h.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/status.h"

namespace commlens::bench {

// |count| values of E (0 .. count-1); |from| maps a name to a value; |what| and |choices|
// make the error message ("unknown backend 'x'; expected nccl|...").
template <typename E>
Result<std::vector<E>> ParseNameList(const std::vector<std::string>& items, size_t count,
                                     std::optional<E> (*from)(std::string_view),
                                     std::string_view what, const std::string& choices) {
  std::vector<E> out;
  auto add = [&out](E v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  for (const std::string& item : items) {
    std::string_view rest = item;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (name.empty()) continue;
      if (name == "all") {
        for (size_t i = 0; i < count; ++i) add(static_cast<E>(i));
        continue;
      }
      std::optional<E> v = from(name);
      if (!v) return Error(fmt::format("unknown {} '{}'; expected {}", what, name, choices));
      add(*v);
    }
  }
  return out;
}

}  // namespace commlens::bench
