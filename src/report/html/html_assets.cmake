# The files the HTML report inlines into every page, embedded into the library at build
# time (.incbin), so the commlens binary writes a page that stands alone:
#   - the chart library, echarts.min.js, from npm (pinned in html/package.json, installed
#     by scripts/setup.sh into BUILD_DIR/npm with `npm ci`; never committed);
#   - the page's own template, style sheet and script (html/page/).
# Without the chart library the build still succeeds and `commlens report -o` says what
# to run instead of writing a page.
set(COMMLENS_CHART_JS "" CACHE FILEPATH
    "echarts.min.js to inline into HTML reports (default: BUILD_DIR/npm/node_modules/echarts/dist/echarts.min.js)")
set(_html_dir ${CMAKE_CURRENT_SOURCE_DIR}/html)
set(_chart_js "${COMMLENS_CHART_JS}")
if(NOT _chart_js)
  set(_chart_js ${CMAKE_BINARY_DIR}/npm/node_modules/echarts/dist/echarts.min.js)
endif()
set(COMMLENS_HTML_CHART_VERSION "")
if(EXISTS ${_chart_js})
  set(COMMLENS_HTML_HAVE_CHART 1)
  get_filename_component(_chart_pkg ${_chart_js} DIRECTORY)
  if(EXISTS ${_chart_pkg}/../package.json)
    file(READ ${_chart_pkg}/../package.json _pkg)
    string(JSON COMMLENS_HTML_CHART_VERSION ERROR_VARIABLE _err GET "${_pkg}" version)
  endif()
  message(STATUS "commlens HTML report: chart library ${_chart_js} (echarts ${COMMLENS_HTML_CHART_VERSION})")
else()
  set(COMMLENS_HTML_HAVE_CHART 0)
  set(_chart_js ${_html_dir}/page/no_chart_library.js)
  message(STATUS "commlens HTML report: no chart library (run scripts/setup.sh, which installs "
                 "echarts with npm into ${CMAKE_BINARY_DIR}/npm, then configure again); "
                 "`commlens report -o` will say so")
endif()
set(COMMLENS_HTML_CHART_JS ${_chart_js})
set(COMMLENS_HTML_PAGE_DIR ${_html_dir}/page)
set(COMMLENS_HTML_ASSETS_CC ${CMAKE_CURRENT_BINARY_DIR}/html_assets.cc)
configure_file(${_html_dir}/html_assets.cc.in ${COMMLENS_HTML_ASSETS_CC} @ONLY)
set_source_files_properties(${COMMLENS_HTML_ASSETS_CC} PROPERTIES OBJECT_DEPENDS
  "${_chart_js};${_html_dir}/page/report.html;${_html_dir}/page/report.css;${_html_dir}/page/report.js;${_html_dir}/page/diff.js;${_html_dir}/page/common.js")
# Configure again when the chart library appears or changes (setup.sh installs it).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_html_dir}/package.json)
