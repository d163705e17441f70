#include "report/html/html_report.h"

#include <fmt/format.h>

#include "common/json_writer.h"
#include "common/output_file.h"
#include "report/html/html_assets.h"
#include "report/html/report_data.h"

namespace commlens::report::html {

namespace {

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON that may sit inside <script>: '<' appears only within JSON strings, where
// "\u003c" means the same, so no "</script" or "<!--" can end or alter the element.
std::string ScriptSafeJson(const nlohmann::json& j) {
  const std::string text = JsonText(j, -1);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

// The template with each @NAME@ replaced; the template is ours, the values are not
// searched again.
std::string Fill(std::string_view tmpl, const std::vector<std::pair<std::string_view, std::string_view>>& values) {
  std::string out;
  size_t reserve = tmpl.size();
  for (const auto& v : values) reserve += v.second.size();
  out.reserve(reserve);
  size_t pos = 0;
  while (pos < tmpl.size()) {
    const size_t at = tmpl.find('@', pos);
    if (at == std::string_view::npos) break;
    bool replaced = false;
    for (const auto& [name, value] : values) {
      if (tmpl.compare(at + 1, name.size(), name) == 0 && at + 1 + name.size() < tmpl.size() &&
          tmpl[at + 1 + name.size()] == '@') {
        out.append(tmpl.substr(pos, at - pos));
        out.append(value);
        pos = at + name.size() + 2;
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      out.append(tmpl.substr(pos, at + 1 - pos));
      pos = at + 1;
    }
  }
  out.append(tmpl.substr(std::min(pos, tmpl.size())));
  return out;
}

}  // namespace

std::string MissingChartLibraryMessage() {
  if (EmbeddedAssets().have_chart_library) return "";
  return "this commlens was built without the chart library the HTML report inlines (echarts, from npm). "
         "Run scripts/setup.sh (it installs echarts with npm into BUILD_DIR/npm and rebuilds), or configure "
         "with -DCOMMLENS_CHART_JS=/path/to/echarts.min.js and build again";
}

Result<std::string> RenderHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                                     const HtmlReportOptions& options) {
  const HtmlAssets assets = EmbeddedAssets();
  if (!assets.have_chart_library) return Error(MissingChartLibraryMessage());
  const nlohmann::json data = BuildReportData(trace, job, options);
  const std::string title = HtmlEscape(data["title"].get<std::string>());
  const std::string chart = fmt::format("echarts {}", assets.chart_library_version);
  return Fill(assets.page_html, {{"TITLE", title},
                                 {"CHART_LIBRARY", chart},
                                 {"STYLE", assets.page_css},
                                 {"CHART_JS", assets.chart_js},
                                 {"PAGE_JS", assets.page_js},
                                 {"DATA", ScriptSafeJson(data)}});
}

Status WriteHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                       const HtmlReportOptions& options, const std::string& path) {
  Result<std::string> page = RenderHtmlReport(trace, job, options);
  if (!page.ok()) return page.status();
  return WriteWholeFile(path, *page);
}

}  // namespace commlens::report::html
