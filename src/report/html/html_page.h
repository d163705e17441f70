// One self-contained page: the template (page/report.html) filled with a title, the chart
// library, the page's style, one of its scripts (the analyze report's or the diff's) and
// its data. Every HTML page commlens writes goes through here, so every one has the same
// guarantees: the data cannot end its element, and only the two inlined scripts can run.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace commlens::report::html {

// |page_script|: EmbeddedAssets().page_js or .diff_js. An error when this binary has no
// chart library (MissingChartLibraryMessage).
Result<std::string> RenderPage(std::string_view title, const nlohmann::json& data, std::string_view page_script);

}  // namespace commlens::report::html
