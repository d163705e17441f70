// What every commlens page's script shares (inlined before report.js or diff.js, in the
// same script element, so the page's one script hash covers it): building elements from
// text, durations in words, and escaping for the few places that take markup.
'use strict';
// An element with attributes and children; children are text or elements, never markup.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'style') e.style.cssText = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}
function fmtUs(us) {
  if (us == null || !isFinite(us)) return '–';
  const a = Math.abs(us);
  if (a >= 1e6) return (us / 1e6).toFixed(2) + ' s';
  if (a >= 1e3) return (us / 1e3).toFixed(a >= 1e5 ? 1 : 2) + ' ms';
  if (a >= 1) return us.toFixed(a >= 100 ? 0 : 1) + ' µs';
  return (us * 1e3).toFixed(0) + ' ns';
}
// Text for HTML. The pages' tooltips are HTML (echarts sets them with innerHTML), and the
// names in them come from the trace: a process group, host, kernel or benchmark can be
// named with an image tag whose onerror handler runs script. Every value a tooltip
// formatter puts into its markup goes through esc(). (Elements built with el() take text
// nodes, never markup; echarts escapes its own default tooltips; legends and axis labels
// are drawn on the canvas.)
const HTML_ESCAPES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
const esc = (v) => String(v).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
