// The files an HTML report inlines: the chart library (echarts, from npm at build time)
// and the page's own template, style sheet and script (src/report/html/page/).
#pragma once

#include <string_view>

namespace commlens::report::html {

struct HtmlAssets {
  bool have_chart_library = false;  // false: built without it (see html_assets.cmake)
  std::string_view chart_library_version;
  std::string_view chart_js;
  std::string_view page_html;  // holds the @PLACEHOLDERS@ that html_report.cc fills
  std::string_view page_css;
  std::string_view page_js;
  std::string_view diff_js;   // the script of `commlens diff --html` pages
  std::string_view common_js; // what both scripts share, inlined before either
};

// What this binary was built with.
HtmlAssets EmbeddedAssets();

}  // namespace commlens::report::html
