#!/usr/bin/env node
// Browser test: the HTML report never runs script that came from a trace. A real job
// (examples/traces/ddp) is rewritten at test time so that every name the page shows is a
// payload: process group names and descriptions, kernel names, the host name, the trace
// files' names (and one unreadable file, whose failure the page reports), a benchmark's
// collective name; the written page's data then gets payloads in what ddp has no real
// source for (counters, every cross-rank table, findings, warnings). Each payload tries to
// run script (an <img onerror>, <svg onload>, <script>, a breakout of the data element)
// that would set window.__pwned, change document.title or open an alert.
//
// Chromium opens the page; every chart's every series point is hovered (echarts'
// showTip, capped per series, and real mouse moves over each chart), every legend entry
// toggled, every link in the page clicked. The test passes when no payload ran, nothing
// was blocked by the Content-Security-Policy (no violation, no console error), the page
// requested nothing, the script policy has no 'unsafe-inline', and the payloads show as
// literal text in the tables and in the tooltips.
//
//   node tests/browser/hostile_names_test.js --commlens build/src/cli/commlens --out build/browser-test \
//        [--chromium /usr/bin/chromium] [--node-modules build/npm/node_modules]
// Exit 0 passed, 1 failed, 77 skipped (no playwright-core or no chromium).
'use strict';
const {spawnSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const {parseArgs, launch, openPage} = require('./chromium');

// A name that runs script if it is ever parsed as HTML; |tag| says where it came from. A
// file name cannot hold '/': |file| leaves out the closing tags (and so the attempt to
// end the page's data element early with </script>).
function payload(tag, file) {
  const run = `(window.__pwned=window.__pwned||[]).push('${tag}');document.title='pwned'`;
  return `${tag}<img src=x onerror="${run}"><svg onload="${run}">` +
    (file ? '' : `</svg></script><script>${run}</script><b onmouseover=alert('${tag}')>{b|rich}</b>`);
}
// Shown as text, a payload reads "<tag><img" (a long group name is cut after 14
// characters, a note starts with a capital).
const shows = (text, tag) => text.toLowerCase().includes(`${tag}<img`);

// ddp with every name it has replaced by a payload; the folder of trace files.
function hostileJob(out) {
  // The folder's name is the report's title (the page's <title> and heading).
  const dir = path.join(out, payload('dir', true));
  fs.rmSync(dir, {recursive: true, force: true});
  // Left by an earlier run under another name (the payload changed): one folder of traces.
  for (const old of fs.readdirSync(out)) if (old.startsWith('dir<')) fs.rmSync(path.join(out, old), {recursive: true});
  fs.mkdirSync(dir, {recursive: true});
  const groups = {};  // old process group name -> new, the same on every rank
  const kernels = {};  // old kernel name -> new
  const src = 'examples/traces/ddp';
  for (const file of fs.readdirSync(src).sort()) {
    const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(src, file))));
    const rank = trace.distributedInfo.rank;
    trace.host_name = payload(`host${rank}`);
    const group = (name) => (groups[name] = groups[name] || payload(`group${name}`));
    for (const pg of trace.distributedInfo.pg_config) {
      pg.pg_name = group(pg.pg_name);
      pg.pg_desc = payload('desc');
    }
    for (const e of trace.traceEvents) {
      const args = e.args || {};
      if ('Process Group Name' in args) args['Process Group Name'] = group(args['Process Group Name']);
      if ('Process Group Description' in args) args['Process Group Description'] = payload('desc');
      if (e.cat === 'kernel') {
        // NCCL kernels keep their prefix: it is what makes them communication.
        const n = Object.keys(kernels).length;
        kernels[e.name] = kernels[e.name] ||
          (e.name.startsWith('nccl') ? e.name.replace(/^(nccl\w*?_)/, `$1${payload(`${n}kernel`)}`) : payload(`${n}kernel`));
        e.name = kernels[e.name];
      }
    }
    fs.writeFileSync(path.join(dir, `${file.replace('.json.gz', '')}${payload('file', true)}.json.gz`),
      zlib.gzipSync(JSON.stringify(trace)));
  }
  // A file that fails to load: the page reports it by name. It starts like a trace (a
  // folder's files that do not are skipped, not failed) and is cut short.
  fs.writeFileSync(path.join(dir, `broken${payload('failure', true)}.json`), '{"schemaVersion": 1, "traceEvents": [');
  return dir;
}

// A benchmark run whose collective is named by a payload (the curve's legend and tooltip).
function hostileBench(out) {
  const bench = JSON.parse(fs.readFileSync('tests/bench/data/h200x4_all_reduce_run1.json', 'utf8'));
  for (const c of bench.collectives) c.name = payload('bench');
  const file = path.join(out, 'hostile-bench.json');
  fs.writeFileSync(file, JSON.stringify(bench));
  return file;
}

// The page's data with payloads where ddp has no real source of names.
function withHostileData(html) {
  const open = '<script type="application/json" id="report-data">';
  const a = html.indexOf(open) + open.length, b = html.indexOf('</script>', a);
  const data = JSON.parse(html.slice(a, b));
  const g = data.collectives.buckets[0];
  data.inputs.warnings.push(payload('warning'));
  data.findings.push({rule: 'x', text: payload('finding'), section: 'crossrank', cost_us_per_step: 12});
  data.counters.push({name: payload('counter'), unit: payload('unit'), rate: true, start_s: 0, bin_s: 0.001,
    series: [0, 1].map((k) => ({label: payload(`nic${k}`), values: [1, 5, 3, null, 7, 2].map((v) => v * (k + 1))}))});
  const x = data.cross_rank;
  x.summary = payload('summary');
  x.stragglers[0].cause = 'compute';
  x.stragglers[0].kernels = [payload('straggler-kernel')];
  x.hangs = [{group: g.group, seq: 29, op: 'all_reduce', desync: false, reached: [0], missing: [1], detail: payload('hang')}];
  x.contended_time_us = 10;
  x.contention = [{group: g.group, op: g.op, size_min_bytes: g.size_min_bytes,
    alone: {count: 6, enough_samples: true, busbw_p25_gbps: 7, busbw_median_gbps: 8, busbw_p75_gbps: 9},
    overlapped: {count: 6, enough_samples: true, busbw_p25_gbps: 3, busbw_median_gbps: 4, busbw_p75_gbps: 5},
    with_groups: [payload('with-group')], transfer_unknown: 0}];
  x.pipeline = {detected: true, stages: 2, microbatches: 4, schedule: payload('schedule'), bubble_fraction: 0.3, ideal_fraction: 0.2,
    per_stage: [0, 1].map((r) => ({rank: r, idle_share: 0.3, warmup_idle_us: 9, steady_idle_us: 4, cooldown_idle_us: 9}))};
  x.protocols = [{group: g.group, op: g.op, size_min_bytes: g.size_min_bytes, algorithm: payload('algo'), protocol: payload('proto'),
    channels: 4, count: 2, transfer_busbw_gbps: 1}];
  x.clock.applied = true;
  x.clock.notes = [payload('note')];
  x.clock.offsets.forEach((o, i) => { o.offset_us = -i; o.bound_us = 1; o.collectives = 3; });
  // Written as the report writes it: '<' escaped, so the payloads' </script> stays inside.
  return html.slice(0, a) + JSON.stringify(data).replace(/</g, '\\u003c') + html.slice(b);
}

// Hovers every chart: echarts' own tooltip action on each series point (evenly spaced,
// at most |cap| per series), then the mouse over a grid of each chart. Returns the text of
// every tooltip shown.
async function hoverEverything(page, cap) {
  const texts = await page.evaluate(async (cap) => {
    const seen = [];
    const pause = () => new Promise((r) => setTimeout(r, 0));
    for (const div of document.querySelectorAll('.chart')) {
      const chart = echarts.getInstanceByDom(div);
      if (!chart) continue;
      div.scrollIntoView();
      const series = chart.getOption().series || [];
      for (let s = 0; s < series.length; s++) {
        const n = (series[s].data || []).length;
        const step = Math.max(1, Math.ceil(n / cap));
        for (let i = 0; i < n; i += step) {
          chart.dispatchAction({type: 'showTip', seriesIndex: s, dataIndex: i});
          await pause();
          seen.push(div.innerText);
        }
      }
      chart.dispatchAction({type: 'hideTip'});
    }
    return seen;
  }, cap);
  for (const div of await page.$$('.chart')) {
    await div.scrollIntoViewIfNeeded();
    const box = await div.boundingBox();
    if (!box) continue;
    for (let y = 0.1; y < 1; y += 0.16)
      for (let x = 0.05; x < 1; x += 0.09) {
        await page.mouse.move(box.x + x * box.width, box.y + y * box.height);
        texts.push(await div.innerText());
      }
  }
  await page.mouse.move(0, 0);
  return texts;
}

// Toggles every legend entry off and on again, and clicks every link of the page (all
// in-page anchors) and every chart (a click on a point selects nothing but must run nothing).
async function clickEverything(page) {
  await page.evaluate(() => {
    for (const div of document.querySelectorAll('.chart')) {
      const chart = echarts.getInstanceByDom(div);
      for (const legend of (chart && chart.getOption().legend) || [])
        for (const s of chart.getOption().series)
          if (s.name != null) {
            chart.dispatchAction({type: 'legendToggleSelect', name: s.name});
            chart.dispatchAction({type: 'legendToggleSelect', name: s.name});
          }
    }
  });
  for (const link of await page.$$('a[href^="#"]')) await link.click();
  for (const div of await page.$$('.chart')) {
    await div.scrollIntoViewIfNeeded();
    const box = await div.boundingBox();
    if (box) await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  }
}

// |shown|: the tags whose names the page must show as text; |tipped|: in a tooltip.
async function checkHostilePage(browser, file, shown, tipped) {
  const {page, context, problems} = await openPage(browser, file);
  const title = await page.title();
  const texts = await hoverEverything(page, 60);
  await clickEverything(page);
  await page.waitForTimeout(200);
  const after = await page.evaluate(() => ({
    pwned: window.__pwned || null,
    csp: window.__cspViolations || [],
    title: document.title,
    policy: document.querySelector('meta[http-equiv="Content-Security-Policy"]').content,
    text: document.body.innerText,
    injected: document.querySelectorAll('#report img, #report svg, #report script, #report [onerror], #report [onload]').length,
    scripts: document.querySelectorAll('script').length,
  }));
  if (after.pwned) problems.push(`a payload ran: ${after.pwned.join(', ')}`);
  for (const v of after.csp) problems.push(`CSP violation: ${v}`);
  if (after.title !== title || title === 'pwned') problems.push(`the title changed: ${title} -> ${after.title}`);
  const scriptSrc = (after.policy.match(/script-src ([^;]*)/) || [])[1] || '';
  if (!scriptSrc || scriptSrc.includes('unsafe-inline') || !/'sha256-/.test(scriptSrc))
    problems.push(`script-src is '${scriptSrc}': it must name the page's scripts by hash, without 'unsafe-inline'`);
  if (after.injected) problems.push(`${after.injected} elements from names were parsed as markup`);
  if (after.scripts !== 3) problems.push(`${after.scripts} script elements, want 3 (data, chart library, page)`);
  // The names show as literal text: in the page (tables, warnings, findings, headings)...
  for (const tag of shown)
    if (!shows(after.text, tag)) problems.push(`the page does not show ${tag}'s name as text`);
  if (!after.text.includes(payload('desc'))) problems.push('a whole payload is not shown as it is');
  // ...and in the tooltips: the collectives' (group description, benchmark curve) and the
  // counters' (echarts' own, series labels).
  for (const tag of tipped)
    if (!texts.some((t) => shows(t, tag))) problems.push(`no tooltip shows ${tag}'s name as text`);
  await context.close();
  return {problems, tooltips: texts.length};
}

async function main() {
  const a = parseArgs(process.argv);
  const b = await launch(a);
  let failed = false;
  try {
    const traces = hostileJob(a.out);
    const bench = hostileBench(a.out);
    const html = path.join(a.out, 'hostile.html');
    const r = spawnSync(a.commlens, ['report', traces, '-o', html, '-q', '--bench', bench, '--align', 'collectives'],
      {stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8'});
    if (r.status !== 2) {  // 2: the broken file failed, the others were reported
      console.log(`FAIL commlens report exited ${r.status}, want 2: ${r.stderr}`);
      process.exit(1);
    }
    fs.writeFileSync(html, withHostileData(fs.readFileSync(html, 'utf8')));
    const c = await checkHostilePage(b, html, ['dir', 'desc', 'group0', 'kernel', 'failure', 'warning', 'finding',
      'summary', 'straggler-kernel', 'hang', 'with-group', 'schedule', 'algo', 'proto', 'host0', 'note', 'counter', 'unit'],
    ['desc', 'bench', 'nic0']);
    failed = c.problems.length > 0;
    console.log(`${failed ? 'FAIL' : 'ok'} hostile names: ${c.tooltips} tooltips hovered; page ${html}`);
    for (const p of c.problems) console.log(`  ${p}`);
    // The diff page (commlens diff --html): the real ddp against its hostile copy, so
    // every bucket, kernel and the run's own name in it is a payload.
    const diff = path.join(a.out, 'hostile-diff.html');
    const d = spawnSync(a.commlens, ['diff', 'examples/traces/ddp', traces, '--html', diff, '-q'],
      {stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8'});
    if (d.status !== 2) {
      console.log(`FAIL commlens diff exited ${d.status}, want 2: ${d.stderr}`);
      process.exit(1);
    }
    const cd = await checkHostilePage(b, diff, ['dir', 'desc', 'kernel'], []);
    console.log(`${cd.problems.length ? 'FAIL' : 'ok'} hostile names in a diff: ${cd.tooltips} tooltips hovered; page ${diff}`);
    for (const p of cd.problems) console.log(`  ${p}`);
    failed = failed || cd.problems.length > 0;
  } finally {
    await b.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
