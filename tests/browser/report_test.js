#!/usr/bin/env node
// Browser test of the HTML report: for every shipped sample (examples/traces/*), writes the
// page with `commlens report`, opens it in headless Chromium (Debian's /usr/bin/chromium
// driven by playwright-core), and checks that
//   - no console error and no uncaught exception occurs,
//   - the browser requests nothing but the page itself (every request is recorded),
//   - every chart drew: as many non-empty canvases as the page created charts,
//   - zooming the timeline (mouse wheel) raises no error;
// then saves a full-page screenshot per sample under --out. One more page, ddp with a
// made-up cross-rank section (a hang, contention, a pipeline, aligned clocks, protocols),
// draws what no sample has.
//
//   node tests/browser/report_test.js --commlens build/src/cli/commlens --out build/browser-test \
//        [--chromium /usr/bin/chromium] [--node-modules build/npm/node_modules] [--sample ddp ...]
// Exit 0 passed, 1 failed, 77 skipped (no playwright-core or no chromium: scripts/setup.sh
// installs both).
'use strict';
const {execFileSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const {parseArgs, launch, openPage} = require('./chromium');

async function checkPage(browser, file, shot) {
  const {page, context, problems, loadMs} = await openPage(browser, file);
  const drawn = await page.evaluate(() => {
    const canvases = [...document.querySelectorAll('.chart canvas')];
    return {
      charts: Number(document.body.dataset.charts || 0),
      nonEmpty: canvases.filter((c) => c.width > 0 && c.height > 0 && c.getBoundingClientRect().height > 0).length,
      sections: [...document.querySelectorAll('section')].map((s) => s.id),
      findings: document.querySelectorAll('ol.findings li').length,
      crossTables: document.querySelectorAll('#crossrank table').length,
      roleRows: document.querySelectorAll('#roles tbody tr').length,
      roleCharts: document.querySelectorAll('#roles .chart canvas').length,
      pipelineRule: (document.querySelector('#crossrank .pipeline-rule') || {}).textContent || '',
    };
  });
  if (drawn.charts === 0) problems.push('no chart was drawn');
  if (drawn.nonEmpty < drawn.charts) problems.push(`${drawn.charts} charts but ${drawn.nonEmpty} non-empty canvases`);
  if (!drawn.sections.includes('summary') || !drawn.sections.includes('collectives') || !drawn.sections.includes('crossrank'))
    problems.push(`sections missing: ${drawn.sections.join(', ')}`);
  const timeline = await page.$('#timeline .chart');
  if (timeline) {  // zoom in and out over the timeline
    const box = await timeline.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -600);
    await page.mouse.wheel(0, 300);
    await page.waitForTimeout(100);
  }
  await page.mouse.move(0, 0);
  await page.screenshot({path: shot, fullPage: true});
  await context.close();
  return {problems, loadMs, drawn};
}

// ddp's page with every cross-rank part filled in: what the analysis writes for a pipeline
// job with two process groups on aligned clocks (docs/json-report.md, "cross_rank").
function withMadeUpCrossRank(html) {
  const open = '<script type="application/json" id="report-data">';
  const a = html.indexOf(open) + open.length, b = html.indexOf('</script>', a);
  const data = JSON.parse(html.slice(a, b));
  const x = data.cross_rank;
  const g = data.collectives.buckets[0];
  x.stragglers[0].cause = 'compute';
  x.stragglers[0].kernels = ['ampere_sgemm_128x64_tn', 'vectorized_elementwise_kernel'];
  x.hangs = [{group: g.group, seq: 29, op: 'all_reduce', desync: false, reached: [0, 1, 2], missing: [3],
    detail: 'rank 3 never reached collective #29 (all_reduce) of group 0; ranks 0-2 ran it (waiting in it up to 812 us)'}];
  x.contended_time_us = 5210.5;
  x.contention = [{group: g.group, op: g.op, size_min_bytes: g.size_min_bytes,
    alone: {count: 20, enough_samples: true, busbw_p25_gbps: 78.1, busbw_median_gbps: 80.2, busbw_p75_gbps: 82.0},
    overlapped: {count: 8, enough_samples: true, busbw_p25_gbps: 35.0, busbw_median_gbps: 38.5, busbw_p75_gbps: 40.1},
    with_groups: ['ep'], transfer_unknown: 0}];
  x.pipeline = {detected: true, stages: 4, microbatches: 8, schedule: '1F1B', bubble_fraction: 0.31, ideal_fraction: 0.2727,
    schedule_rule: 'm: 8 forward messages from stage 0 to stage 1 per profiler step',
    per_stage: [0, 1, 2, 3].map((r) => ({rank: r, idle_share: 0.25 + 0.03 * r, warmup_idle_us: 900 * r, steady_idle_us: 400 + 50 * r, cooldown_idle_us: 900 * (3 - r)}))};
  x.protocols = [{group: g.group, op: g.op, size_min_bytes: g.size_min_bytes, algorithm: 'RING', protocol: 'SIMPLE', channels: 24, count: 28, transfer_busbw_gbps: g.transfer.busbw_gbps}];
  x.clock.applied = true;
  x.clock.offsets.forEach((o, i) => { o.offset_us = i * -1250.5; o.bound_us = i ? 3.2 : 0; o.collectives = i ? 28 : 0; o.host = 'node' + i; });
  return html.slice(0, a) + JSON.stringify(data).replace(/</g, '\\u003c') + html.slice(b);
}

async function main() {
  const a = parseArgs(process.argv, {samples: true});
  // The real two-GPU cross-rank jobs too: a pipeline, two contending groups, a hang (its
  // Kineto traces and the plugin's recording).
  if (!a.samples.length) {
    a.samples = ['ddp', 'fsdp', 'moe', 'native', 'cross-rank/pipeline-1f1b', 'cross-rank/contention', 'cross-rank/hang',
      'cross-rank/hang/native', 'pipelines/megatron-pp2-dp2'];
  }
  const b = await launch(a);
  let failed = 0;
  try {
    for (const sample of a.samples) {
      const file = sample.replace(/\//g, '.');
      const html = path.join(a.out, `${file}.html`);
      const extra = [];
      if (sample === 'ddp') extra.push('--bench', 'tests/bench/data/h200x4_all_reduce_run1.json', '--perfetto', path.join(a.out, 'ddp.perfetto.json'));
      const t0 = Date.now();
      execFileSync(a.commlens, ['report', `examples/traces/${sample}`, '-o', html, '-q'].concat(extra), {stdio: ['ignore', 'inherit', 'pipe']});
      const genMs = Date.now() - t0;
      const shot = path.join(a.out, `${file}.png`);
      const r = await checkPage(b, html, shot);
      // The real cross-rank jobs draw their part of the "Across ranks" section.
      const wantTables = {'cross-rank/pipeline-1f1b': 1, 'cross-rank/contention': 2, 'cross-rank/hang': 1,
        'pipelines/megatron-pp2-dp2': 1}[sample] || 0;
      if (r.drawn.crossTables < wantTables) r.problems.push(`${r.drawn.crossTables} cross-rank tables, want at least ${wantTables}`);
      // The TP x DP mesh names its five groups' roles and draws the exposed share per role per step.
      if (sample === 'mesh' && (r.drawn.roleRows !== 5 || r.drawn.roleCharts !== 1))
        r.problems.push(`roles: ${r.drawn.roleRows} group rows and ${r.drawn.roleCharts} charts, want 5 and 1`);
      const size = (fs.statSync(html).size / 1e6).toFixed(2);
      const status = r.problems.length ? 'FAIL' : 'ok';
      console.log(`${status} ${sample}: ${size} MB written in ${genMs} ms, drawn in ${r.loadMs} ms, ` +
        `${r.drawn.charts} charts, ${r.drawn.findings} findings, sections ${r.drawn.sections.join(' ')}; screenshot ${shot}`);
      for (const p of r.problems) console.log(`  ${p}`);
      if (r.problems.length) failed++;
      if (sample !== 'ddp') continue;
      const made = path.join(a.out, 'ddp-crossrank.html');
      fs.writeFileSync(made, withMadeUpCrossRank(fs.readFileSync(html, 'utf8')));
      const m = await checkPage(b, made, path.join(a.out, 'ddp-crossrank.png'));
      if (m.drawn.crossTables < 5) m.problems.push(`${m.drawn.crossTables} cross-rank tables, want 5 (stragglers, contention, pipeline, protocols, clocks)`);
      if (!m.drawn.pipelineRule.startsWith('Found by: m: 8 forward messages'))
        m.problems.push(`the pipeline's rule is not shown: '${m.drawn.pipelineRule}'`);
      console.log(`${m.problems.length ? 'FAIL' : 'ok'} ddp with every cross-rank part: ${m.drawn.charts} charts, ` +
        `${m.drawn.crossTables} cross-rank tables; screenshot ${path.join(a.out, 'ddp-crossrank.png')}`);
      for (const p of m.problems) console.log(`  ${p}`);
      if (m.problems.length) failed++;
    }
  } finally {
    await b.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
