/* commlens was built without the chart library (src/report/html/html_assets.cmake); commlens report refuses to write a page. */
