#include "report/html/html_report.h"

#include "common/output_file.h"
#include "report/html/html_assets.h"
#include "report/html/html_page.h"
#include "report/html/report_data.h"

namespace commlens::report::html {

std::string MissingChartLibraryMessage() {
  if (EmbeddedAssets().have_chart_library) return "";
  return "this commlens was built without the chart library the HTML report inlines (echarts, from npm). "
         "Run scripts/setup.sh (it installs echarts with npm into BUILD_DIR/npm and rebuilds), or configure "
         "with -DCOMMLENS_CHART_JS=/path/to/echarts.min.js and build again";
}

Result<std::string> RenderHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                                     const HtmlReportOptions& options) {
  if (!EmbeddedAssets().have_chart_library) return Error(MissingChartLibraryMessage());
  const nlohmann::json data = BuildReportData(trace, job, options);
  return RenderPage(data["title"].get<std::string>(), data, EmbeddedAssets().page_js);
}

Status WriteHtmlReport(const model::Trace& trace, const analysis::JobAnalysis& job,
                       const HtmlReportOptions& options, const std::string& path) {
  Result<std::string> page = RenderHtmlReport(trace, job, options);
  if (!page.ok()) return page.status();
  return WriteWholeFile(path, *page);
}

}  // namespace commlens::report::html
