// commlens diff page: two runs side by side, from #report-data (schema commlens.diff,
// docs/json-report.md "Diff"), with the inlined echarts. Loads nothing. Every name comes
// from a trace: elements take text nodes only, and the one tooltip with markup escapes.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const root = document.getElementById('report');
  const A = '#0072B2', B = '#E69F00';
  // el, fmtUs and esc: common.js, inlined before this script.
  function value(unit, v) {
    if (unit === 'us') return fmtUs(v);
    if (unit === 'GB/s') return v.toFixed(1) + ' GB/s';
    return v.toFixed(3);
  }
  function signed(unit, v) { return (v < 0 ? '-' : '+') + value(unit, Math.abs(v)); }
  function percent(r) {
    if (!r.known_a || !r.known_b) return r.known_a ? 'only in A' : 'only in B';
    if (r.a === 0) return r.b === 0 ? '0%' : 'new';
    return (r.relative >= 0 ? '+' : '') + (100 * r.relative).toFixed(1) + '%';
  }
  function interval(r) {
    return r.interval ? '[' + signed(r.unit, r.interval[0]) + ', ' + signed(r.unit, r.interval[1]) + ']' : 'too few samples';
  }
  const per = data.a.over_steps ? 'step' : 'slice';
  const level = Math.round(100 * data.level) + '%';
  function runText(r) {
    return r.input + ' (' + r.formats + '): ' + r.ranks + ' ranks, ' + (r.over_steps ? r.steps + ' steps' :
      r.steps + ' slice' + (r.steps === 1 ? '' : 's') + ' of equal operation counts (no profiler steps)') +
      (r.straggler ? '; the verdict blames ' + r.straggler +
        (r.straggler_gain > 0 ? ' (fixing it: ' + (100 * r.straggler_gain).toFixed(1) + '% shorter step)' : '') : '');
  }

  root.append(el('header', {class: 'top'}, el('h1', {}, 'What changed from A to B')));
  root.append(el('p', {class: 'meta'}, 'A = ' + runText(data.a)));
  root.append(el('p', {class: 'meta'}, 'B = ' + runText(data.b)));
  for (const w of data.warnings || []) root.append(el('p', {class: 'warn'}, 'Warning: ' + w));

  const step = data.rows.find((r) => r.section === 'step');
  if (step) {
    root.append(el('p', {class: 'lead', id: 'step-verdict'}, 'Step time ' + value(step.unit, step.a) + ' → ' +
      value(step.unit, step.b) + ' (' + percent(step) + '; ' + level + ' interval of the change ' + interval(step) + '): ' +
      (!step.interval ? 'no noise estimate' : step.beyond_noise ? 'beyond noise.' : 'within noise.')));
  }

  root.append(el('h2', {}, 'Changes beyond noise'));
  root.append(el('p', {class: 'note'}, 'The ' + level + ' bootstrap interval of the change over the two runs\' ' + per + 's leaves out ' +
    'zero, and the change is at least ' + (100 * data.min_change).toFixed(0) + '% of A. Largest time per ' + per + ' first.'));
  const list = el('ol', {class: 'findings', id: 'changes'});
  for (const i of data.changes) {
    const r = data.rows[i];
    const cost = r.unit === 'GB/s' && r.step_cost_us !== 0 ? ', its transfers ' + signed('us', r.step_cost_us) + ' per ' + per : '';
    const name = r.shown.length > 100 ? r.shown.slice(0, 97) + '...' : r.shown;
    list.append(el('li', {title: r.shown}, r.section + ' ' + name + ': ' + value(r.unit, r.a) + ' → ' + value(r.unit, r.b) +
      ' (' + percent(r) + ')' + cost));
  }
  if (!data.changes.length) root.append(el('p', {class: 'empty'}, 'None: every difference is within what the steps of one run vary by.'));
  else root.append(list);

  // Step times of both runs, step by step.
  if (data.a.step_times_us.length || data.b.step_times_us.length) {
    root.append(el('h2', {}, 'Step times'));
    const div = el('div', {class: 'chart', id: 'step-chart'});
    root.append(div);
    const n = Math.max(data.a.step_times_us.length, data.b.step_times_us.length);
    const chart = echarts.init(div);
    chart.setOption({
      animation: false,
      tooltip: {trigger: 'axis', formatter: (ps) => ps.map((p) => esc(p.seriesName) + ': ' + esc(fmtUs(p.value * 1e3))).join('<br>')},
      legend: {data: ['A', 'B']},
      xAxis: {type: 'category', name: 'summarized step', data: Array.from({length: n}, (_, i) => String(i + 1))},
      yAxis: {type: 'value', name: 'ms'},
      series: [
        {name: 'A', type: 'bar', color: A, data: data.a.step_times_us.map((t) => t / 1e3)},
        {name: 'B', type: 'bar', color: B, data: data.b.step_times_us.map((t) => t / 1e3)},
      ],
    });
    window.addEventListener('resize', () => chart.resize());
  }

  const titles = {
    breakdown: 'Time breakdown per ' + per + ' (mean rank)',
    collective: 'Collectives per ' + per + ' (mean rank; busbw over the transfer time)',
    kernel: 'Kernels per ' + per + ' (mean rank; the longest in either run)',
    rank: 'Waiting for each rank per ' + per + ' (the others\' rank-time)',
    whatif: 'What-if replay',
  };
  for (const section of Object.keys(titles)) {
    const rows = data.rows.filter((r) => r.section === section);
    if (!rows.length) continue;
    root.append(el('h2', {}, titles[section]));
    const table = el('table', {class: 'diff', 'data-section': section});
    table.append(el('tr', {}, el('th', {class: 'l'}, ''), el('th', {}, 'A'), el('th', {}, 'B'), el('th', {}, 'change'),
      el('th', {}, level + ' interval of the change'), el('th', {class: 'l'}, '')));
    for (const r of rows) {
      const tr = el('tr', r.beyond_noise ? {class: 'changed'} : {},
        el('td', {class: 'l name', title: r.shown}, r.shown),
        el('td', {}, r.known_a ? value(r.unit, r.a) : '–'), el('td', {}, r.known_b ? value(r.unit, r.b) : '–'),
        el('td', {}, percent(r)), el('td', {}, r.known_a && r.known_b ? interval(r) : ''),
        el('td', {class: 'l'}, r.beyond_noise ? 'beyond noise' : ''));
      table.append(tr);
    }
    root.append(el('div', {class: 'tablewrap'}, table));
  }
  root.append(el('footer', {}, 'commlens diff · schema ' + data.schema + ' v' + data.schema_version));
  document.body.dataset.rendered = 'true';  // for tests: drawn
})();
