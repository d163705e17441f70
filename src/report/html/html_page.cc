#include "report/html/html_page.h"

#include <fmt/format.h>

#include "common/json_writer.h"
#include "common/sha256.h"
#include "report/html/html_assets.h"
#include "report/html/html_report.h"

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

// The CSP source that lets exactly |script| run: 'sha256-<base64 of its SHA-256>'.
std::string CspHash(std::string_view script) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const Sha256::Digest d = Sha256::Of(script);
  std::string out = "'sha256-";
  for (size_t i = 0; i < d.size(); i += 3) {
    const uint32_t n = uint32_t{d[i]} << 16 | (i + 1 < d.size() ? uint32_t{d[i + 1]} << 8 : 0) |
                       (i + 2 < d.size() ? uint32_t{d[i + 2]} : 0);
    out += kAlphabet[n >> 18 & 63];
    out += kAlphabet[n >> 12 & 63];
    out += i + 1 < d.size() ? kAlphabet[n >> 6 & 63] : '=';
    out += i + 2 < d.size() ? kAlphabet[n & 63] : '=';
  }
  return out + "'";
}

}  // namespace

Result<std::string> RenderPage(std::string_view title, const nlohmann::json& data, std::string_view page_script) {
  const HtmlAssets assets = EmbeddedAssets();
  if (!assets.have_chart_library) return Error(MissingChartLibraryMessage());
  // The page's two scripts run because the policy names their hashes; nothing else can
  // (no 'unsafe-inline': markup a trace smuggles into the page stays inert). The data is a
  // <script type="application/json">, which is never run, so it needs none.
  const std::string chart_script =
      fmt::format("/* echarts {} (Apache License 2.0), inlined by commlens so the page stands alone. */\n{}\n",
                  assets.chart_library_version, assets.chart_js);
  const std::string script = fmt::format("\n{}\n{}\n", assets.common_js, page_script);
  const std::string hashes = CspHash(chart_script) + " " + CspHash(script);
  return Fill(assets.page_html, {{"TITLE", HtmlEscape(title)},
                                 {"SCRIPT_HASHES", hashes},
                                 {"STYLE", assets.page_css},
                                 {"CHART_SCRIPT", chart_script},
                                 {"PAGE_SCRIPT", script},
                                 {"DATA", ScriptSafeJson(data)}});
}

}  // namespace commlens::report::html
