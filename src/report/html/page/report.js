// commlens report page: draws the results held in #report-data (schema commlens.report,
// docs/report.md) with the inlined echarts. Loads nothing; every chart aggregates (one bar
// per rank or step, a capped number of rectangles per timeline row), so 1000 ranks stay fast.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const root = document.getElementById('report');

  // Okabe-Ito: distinguishable with every common colour-vision deficiency.
  const C = {
    compute: '#0072B2', comm: '#E69F00', exposed: '#D55E00', memory: '#009E73',
    other: '#CC79A7', idle: '#C8CDD3', waiting: '#D55E00', transferring: '#56B4E9',
  };
  const SERIES = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
  // TimelineState codes (step_timeline.h): compute, communication, memory, other, exposed communication.
  const STATES = [
    {name: 'compute', color: C.compute}, {name: 'communication', color: C.comm},
    {name: 'memory', color: C.memory}, {name: 'other (sync)', color: C.other},
    {name: 'exposed communication', color: C.exposed},
  ];
  const charts = [];

  // ---- formatting -------------------------------------------------------------------
  function fmtBytes(b) {
    if (b == null || b < 0) return '?';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (Number.isInteger(b) ? b : b.toFixed(b >= 10 ? 0 : 1)) + ' ' + u[i];
  }
  function fmtCount(n) { return Number(n).toLocaleString('en-US'); }
  // el, fmtUs and esc: common.js, inlined before this script.
  function pct(x) { return x == null ? '–' : x.toFixed(1) + '%'; }
  // One unit for a chart's time axis, chosen from its largest value in microseconds.
  function timeUnit(maxUs) {
    if (maxUs >= 2e6) return {div: 1e6, name: 's'};
    if (maxUs >= 2e3) return {div: 1e3, name: 'ms'};
    return {div: 1, name: 'µs'};
  }
  const round = (v, d) => Math.round(v * Math.pow(10, d)) / Math.pow(10, d);

  function section(id, title, note) {
    const s = el('section', {id});
    s.append(el('h2', {}, title));
    if (note) s.append(el('p', {class: 'note'}, note));
    root.append(s);
    return s;
  }
  function chartBox(parent, cls) {
    const d = el('div', {class: 'chart' + (cls ? ' ' + cls : '')});
    parent.append(d);
    return d;
  }
  function draw(div, option) {
    const chart = echarts.init(div, null, {renderer: 'canvas'});
    chart.setOption(Object.assign({animation: false, textStyle: {fontFamily: 'system-ui, sans-serif'}}, option));
    charts.push(chart);
    return chart;
  }
  function legend(parent, items) {
    const d = el('div', {class: 'legend'});
    for (const [name, color] of items)
      d.append(el('span', {}, el('i', {class: 'swatch', style: 'background:' + color}), name));
    parent.append(d);
  }
  function table(parent, head, rows, leftCols) {
    const t = el('table');
    const tr = el('tr');
    head.forEach((h, i) => tr.append(el('th', {class: leftCols.includes(i) ? 'l' : ''}, h)));
    t.append(el('thead', {}, tr));
    const tb = el('tbody');
    for (const r of rows) {
      const row = el('tr');
      r.forEach((c, i) => {
        const td = el('td', {class: leftCols.includes(i) ? 'l name' : ''}, String(c));
        if (leftCols.includes(i)) td.title = String(c);
        row.append(td);
      });
      tb.append(row);
    }
    t.append(tb);
    parent.append(el('div', {class: 'tablewrap'}, t));
  }
  const axisName = {nameLocation: 'middle', nameTextStyle: {color: '#5b6472', fontSize: 12}};
  const baseGrid = {left: 72, right: 24, top: 36, bottom: 56};
  function groupName(name, desc) {
    if (desc && desc !== name) return desc + ' (' + name + ')';
    return 'group ' + (name.length > 16 ? name.slice(0, 14) + '…' : name);
  }
  const fmtBw = (v) => (v >= 10 ? v.toFixed(1) : v > 0 && v < 0.01 ? v.toPrecision(2) : v.toFixed(2));
  const sentence = (t) => t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');

  // ---- header and summary ---------------------------------------------------------------
  const s = data.summary;
  const nranks = data.inputs.ranks;
  const hasGpu = s.span_us > 0;
  const header = el('header', {class: 'top'},
    el('h1', {}, data.title),
    el('div', {class: 'meta'}, `${fmtCount(nranks)} ranks · ${fmtBytes(data.inputs.bytes)} of traces` +
      (data.steps.length ? ` · ${data.steps.length} profiler steps` : '')));
  root.append(header);
  const toc = el('nav', {class: 'toc'});
  root.append(toc);
  for (const f of data.inputs.failures)
    root.append(el('div', {class: 'warn'}, 'Not analyzed: ' + f.message));
  for (const w of data.inputs.warnings) root.append(el('div', {class: 'warn'}, w));

  const sum = section('summary', 'Summary',
    hasGpu ? (s.over === 'steps'
      ? `A profiler step, averaged over ${s.count} steps and the ranks that ran them` +
        (s.left_out.length ? ` (left out: ${s.left_out.map((x) => `#${x.step} ${x.why}`).join(', ')}; each step is in the table below)` : '') +
        '; the step time is the median step. Definitions: docs/analysis.md.'
      : 'The analyzed window, averaged over the ranks (the traces have no profiler steps).')
      : 'These traces hold no GPU kernels (a commlens recording of NCCL operations): the collectives and counters are below.');
  if (hasGpu) {
    const memOther = s.non_compute_us - s.exposed_comm_us;
    const parts = [
      ['compute', s.compute_us, C.compute],
      ['exposed communication', s.exposed_comm_us, C.exposed],
      ['memory & other', memOther, C.memory],
      ['idle', s.idle_us, C.idle],
    ];
    const cards = el('div', {class: 'cards'});
    cards.append(el('div', {class: 'card'}, el('div', {class: 'label'}, s.over === 'steps' ? 'step time (median)' : 'GPU span'),
      el('div', {class: 'value'}, fmtUs(s.over === 'steps' ? s.span_median_us : s.span_us)),
      el('div', {class: 'sub'}, s.count > 1 ? `${fmtUs(s.span_min_us)} – ${fmtUs(s.span_max_us)}` : '')));
    for (const [name, us, color] of parts)
      cards.append(el('div', {class: 'card'},
        el('div', {class: 'label'}, el('i', {class: 'swatch', style: 'background:' + color}), name),
        el('div', {class: 'value'}, pct(s.span_us > 0 ? 100 * us / s.span_us : 0)),
        el('div', {class: 'sub'}, fmtUs(us))));
    cards.append(el('div', {class: 'card'}, el('div', {class: 'label'}, 'communication hidden'),
      el('div', {class: 'value'}, s.overlap_pct == null ? '–' : pct(s.overlap_pct)),
      el('div', {class: 'sub'}, 'of ' + fmtUs(s.comm_us) + ' communication')));
    sum.append(cards);
    const bar = el('div', {class: 'splitbar', title: 'step time split'});
    for (const [name, us, color] of parts)
      bar.append(el('div', {style: `width:${Math.max(0, 100 * us / s.span_us)}%;background:${color}`, title: name + ' ' + fmtUs(us)}));
    sum.append(bar);
  }
  sum.append(el('h3', {}, 'Findings'));
  if (data.findings.length) {
    const ol = el('ol', {class: 'findings'});
    for (const f of data.findings) {
      const li = el('li', {}, f.text + ' ');
      if (f.cost_us_per_step > 0)
        li.append(el('span', {class: 'cost'}, `(≈ ${fmtUs(f.cost_us_per_step)} ${data.steps.length ? 'per step' : 'over the trace'}) `));
      li.append(el('a', {href: '#' + f.section}, 'see ' + (f.section === 'crossrank' ? 'across ranks' : f.section)));
      ol.append(li);
    }
    sum.append(ol);
  } else {
    sum.append(el('p', {class: 'empty'}, 'Nothing stands out: no rule found a problem above its threshold.'));
  }

  // ---- breakdown per rank and per step ------------------------------------------------------
  function breakdownSeries(rows, unit) {
    const v = (f) => rows.map((r) => round(f(r) / unit.div, 3));
    return [
      {name: 'compute', color: C.compute, data: v((r) => r.compute_us)},
      {name: 'exposed communication', color: C.exposed, data: v((r) => r.exposed_comm_us)},
      {name: 'memory & other', color: C.memory, data: v((r) => Math.max(0, r.non_compute_us - r.exposed_comm_us))},
      {name: 'idle', color: C.idle, data: v((r) => r.idle_us)},
    ].map((x) => Object.assign({type: 'bar', stack: 'time', barMaxWidth: 48, large: rows.length > 400,
      itemStyle: {color: x.color}, emphasis: {focus: 'series'}}, x));
  }
  if (hasGpu) {
    const br = section('breakdown', 'Time breakdown per rank',
      'Each bar is one rank\'s analyzed GPU span: compute, communication with no compute beside it, memory copies and other ' +
      'GPU work alone, and idle. Ranks far from the others show imbalance.');
    const R = data.ranks;
    const rows = R.rank.map((_, i) => ({compute_us: R.compute_us[i], exposed_comm_us: R.exposed_comm_us[i],
      non_compute_us: R.non_compute_us[i], idle_us: R.idle_us[i], span_us: R.span_us[i]}));
    const unit = timeUnit(Math.max(...R.span_us));
    const many = R.rank.length > 48;
    draw(chartBox(br), {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: (v) => v + ' ' + unit.name},
      legend: {top: 0},
      grid: Object.assign({}, baseGrid, {bottom: many ? 80 : 56}),
      xAxis: Object.assign({type: 'category', data: R.rank.map(String), name: 'rank', nameGap: 28}, axisName),
      yAxis: Object.assign({type: 'value', name: `GPU time (${unit.name})`, nameGap: 52}, axisName),
      dataZoom: many ? [{type: 'inside'}, {type: 'slider', height: 18, bottom: 8}] : [],
      series: breakdownSeries(rows, unit),
    });
    if (data.steps.length) {
      const st = section('steps', 'Breakdown per profiler step',
        'Each bar is one profiler step, the mean over the ranks that ran it.');
      const unit2 = timeUnit(Math.max(...data.steps.map((x) => x.span_us)));
      draw(chartBox(st), {
        tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: (v) => v + ' ' + unit2.name},
        legend: {top: 0},
        grid: baseGrid,
        xAxis: Object.assign({type: 'category', data: data.steps.map((x) => String(x.step)), name: 'profiler step', nameGap: 28}, axisName),
        yAxis: Object.assign({type: 'value', name: `step time (${unit2.name})`, nameGap: 52}, axisName),
        series: breakdownSeries(data.steps, unit2),
      });
    }
  }

  // ---- parallelism roles ------------------------------------------------------------------
  const PR = data.parallel_roles;
  if (PR && PR.groups.length) {
    const r = section('roles', 'Parallelism roles',
      'Which parallelism each process group serves, and the rule that named it. ' +
      (PR.has_kernels && PR.steps.length
        ? 'Each bar: the share of the step (mean rank) in which a role\'s communication kernels ran with no compute kernel beside them; where two roles run together with no compute they share the time evenly, so the bars add up to the exposed communication.'
        : ''));
    table(r, ['group', 'description', 'size', 'role', 'named by'],
      PR.groups.map((g) => [g.group, g.description, g.size, g.role, g.rule]), [0, 1, 3, 4]);
    if (PR.has_kernels && PR.steps.length) {
      const roles = Object.keys(PR.steps[0].exposed_pct);
      draw(chartBox(r), {
        tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: (v) => v + ' %'},
        legend: {top: 0},
        grid: baseGrid,
        xAxis: Object.assign({type: 'category', data: PR.steps.map((x) => String(x.step)), name: 'profiler step', nameGap: 28}, axisName),
        yAxis: Object.assign({type: 'value', name: 'exposed, % of the step', nameGap: 52}, axisName),
        series: roles.map((name) => ({name: name + ' parallel', type: 'bar',
          data: PR.steps.map((x) => round(x.exposed_pct[name], 1))})),
      });
    }
  }

  // ---- timeline of one step ---------------------------------------------------------------
  const tl = data.timeline;
  if (tl.rows.length) {
    const t = section('timeline', tl.step == null ? 'Timeline of the analyzed window' : `Timeline of step ${tl.step}`,
      (tl.step == null ? 'Every rank over the whole window. ' : 'Every rank during one profiler step (the median-length one unless --step was given), from the step\'s first GPU activity. ') +
      'The first row of a rank is the GPU as a whole; the rows under it are its streams. Scroll or drag to zoom.' +
      (tl.merged_gap_us > 0 ? ` Aggregated for drawing: gaps up to ${fmtUs(tl.merged_gap_us)} between activities of one kind are filled.` : '') +
      (tl.per_stream ? '' : ' Too many ranks to show each stream: one row per rank.'));
    legend(t, [['compute', C.compute], ['communication (on its stream)', C.comm], ['exposed communication (no compute on the GPU)', C.exposed],
      ['memory copy / set', C.memory], ['other (sync)', C.other], ['idle: blank', '#ffffff']]);
    const labels = tl.rows.map((r) => r.stream < 0 ? `rank ${r.rank}` : `  GPU ${r.device} stream ${r.stream}`);
    const unit = timeUnit(tl.length_us);
    const div = unit.div * 1e3;  // ns -> unit
    const items = [];
    tl.rows.forEach((r, y) => {
      for (let k = 0; k < r.start_ns.length; k++)
        items.push([r.start_ns[k] / div, (r.start_ns[k] + r.dur_ns[k]) / div, y, r.state[k]]);
    });
    const nrows = labels.length;
    const visible = Math.min(nrows, 40);
    const box = chartBox(t);
    box.style.height = Math.max(220, Math.min(640, 64 + visible * 22)) + 'px';
    draw(box, {
      tooltip: {formatter: (p) => `${esc(labels[p.value[2]].trim())}<br>${esc(STATES[p.value[3]].name)}: ` +
        `${esc(round(p.value[0], 3))} – ${esc(round(p.value[1], 3))} ${esc(unit.name)}`},
      grid: {left: 150, right: nrows > visible ? 48 : 24, top: 12, bottom: 72},
      xAxis: Object.assign({type: 'value', min: 0, max: round(tl.length_us * 1e3 / div, 3), name: `time since the ${tl.step == null ? 'window' : 'step'}'s first activity (${unit.name})`, nameGap: 28}, axisName),
      yAxis: {type: 'category', data: labels, inverse: true, axisTick: {show: false},
        // Rich text (canvas, not HTML): the labels are made of numbers only, so no name can
        // carry echarts' {style|…} markup into them.
        axisLabel: {fontSize: 11, formatter: (v) => (v.startsWith('rank') ? `{b|${v}}` : v), rich: {b: {fontWeight: 'bold', fontSize: 11}}}, splitLine: {show: false}},
      dataZoom: [{type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter'},
        {type: 'slider', xAxisIndex: 0, height: 18, bottom: 8, filterMode: 'weakFilter', labelFormatter: (v) => round(v, 2) + ' ' + unit.name}]
        .concat(nrows > visible ? [{type: 'slider', yAxisIndex: 0, right: 8, width: 16, startValue: 0, endValue: visible - 1}] : []),
      series: [{
        type: 'custom', encode: {x: [0, 1], y: 2}, data: items, clip: true, progressive: 0,
        renderItem: (params, api) => {
          const a = api.coord([api.value(0), api.value(2)]);
          const b = api.coord([api.value(1), api.value(2)]);
          const h = api.size([0, 1])[1] * 0.72;
          const rect = echarts.graphic.clipRectByRect({x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 0.6), height: h},
            {x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height});
          return rect && {type: 'rect', shape: rect, style: {fill: STATES[api.value(3)].color}};
        },
      }],
    });
  }

  // ---- collectives ---------------------------------------------------------------------------
  const col = data.collectives;
  const cs = section('collectives', 'Collectives',
    'Per process group, operation and message size (power-of-two buckets): GPU time summed over ranks, and bus bandwidth by ' +
    'nccl-tests\' definitions, over the transfer time (after the last rank arrived: what the fabric delivered) and over the ' +
    'kernel time (waiting for late ranks included: not the fabric\'s speed). ' +
    (data.bench.curves.length ? `Lines: the benchmark ${data.bench.source}, what this fabric reaches at each size.`
      : 'Give a benchmark run (--bench) to see what the fabric reaches at each size.'));
  if (col.buckets.length) {
    const xfer = (b) => b.transfer.busbw_gbps;  // null when no op of the bucket had a known transfer time
    const series = [];
    const keyColor = {};
    const byKey = {};
    for (const b of col.buckets) {
      const key = `${b.op} · ${groupName(b.group, b.group_desc)}`;
      if (!(key in keyColor)) keyColor[key] = SERIES[Object.keys(keyColor).length % SERIES.length];
      (byKey[key] = byKey[key] || []).push(b);
    }
    let maxTotal = 0;
    for (const b of col.buckets) maxTotal = Math.max(maxTotal, b.total_us);
    for (const [key, bs] of Object.entries(byKey))
      series.push({name: key, type: 'scatter', color: keyColor[key],
        symbolSize: (v) => 8 + 18 * Math.sqrt(v[2] / maxTotal),
        data: bs.filter((b) => b.transfer.count > 0 && b.transfer.bytes > 0 && xfer(b) != null)
          .map((b) => [b.transfer.bytes / b.transfer.count, round(xfer(b), 2), b.total_us, b.count, round(b.kernel_busbw_gbps, 2),
            b.transfer.waiting_pct])});
    data.bench.curves.forEach((c, i) => series.push({name: c.label, type: 'line', symbol: 'circle', symbolSize: 4,
      color: SERIES[(Object.keys(keyColor).length + i) % SERIES.length], lineStyle: {width: 2, type: 'dashed'},
      data: c.size_bytes.map((x, k) => [x, round(c.busbw_gbps[k], 2)]).filter((p) => p[0] > 0)}));
    // The log axis spans the data, to the next powers of two, not whole decades of 1024.
    const xs = series.flatMap((x) => x.data.map((p) => p[0])).filter((v) => v > 0);
    const xmin = Math.pow(2, Math.floor(Math.log2(Math.min(...xs)))), xmax = Math.pow(2, Math.ceil(Math.log2(Math.max(...xs))) + 1);
    const grid = el('div', {class: 'grid2'});
    cs.append(grid);
    const left = el('div');
    grid.append(left);
    left.append(el('h3', {}, 'Bus bandwidth against message size'));
    if (!xs.length) left.append(el('p', {class: 'empty'}, 'No operation with a known message size and transfer time.'));
    else draw(chartBox(left, 'tall'), {
      tooltip: {trigger: 'item', formatter: (p) => p.seriesType === 'line'
        ? `${esc(p.seriesName)}<br>${esc(fmtBytes(p.value[0]))}: ${esc(p.value[1])} GB/s`
        : `${esc(p.seriesName)}<br>mean ${esc(fmtBytes(p.value[0]))}: ${esc(p.value[1])} GB/s busbw moving data ` +
          `(${esc(p.value[4])} GB/s over the kernel time, ${esc(p.value[5])}% of it waiting)<br>` +
          `${esc(fmtCount(p.value[3]))} ops, ${esc(fmtUs(p.value[2]))} in total`},
      legend: {top: 0, type: 'scroll'},
      grid: Object.assign({}, baseGrid, {top: 48}),
      xAxis: Object.assign({type: 'log', logBase: 2, min: xmin, max: xmax, name: 'message size per rank (bytes, log scale)', nameGap: 30,
        axisLabel: {formatter: (v) => fmtBytes(v)}}, axisName),
      yAxis: Object.assign({type: 'value', name: 'bus bandwidth moving data (GB/s)', nameGap: 48}, axisName),
      series,
    });
    const right = el('div');
    grid.append(right);
    right.append(el('h3', {}, 'Per process group and operation'));
    const agg = {};
    for (const b of col.buckets) {
      const k = b.group + '\u0000' + b.op;
      const a = agg[k] = agg[k] || {group: groupName(b.group, b.group_desc), op: b.op, size: b.group_size, count: 0, total: 0, bytes: 0,
        busbwTime: 0, xferTime: 0, measuredKernel: 0};
      a.count += b.count; a.total += b.total_us; a.bytes += b.bytes;
      if (xfer(b) != null) {
        a.busbwTime += xfer(b) * b.transfer.transfer_us; a.xferTime += b.transfer.transfer_us; a.measuredKernel += b.transfer.kernel_us;
      }
    }
    table(right, ['group', 'op', 'ranks', 'ops', 'GPU time', 'bytes', 'waiting', 'busbw moving data (GB/s)'],
      Object.values(agg).sort((x, y) => y.total - x.total).map((a) => [a.group, a.op, a.size, fmtCount(a.count), fmtUs(a.total),
        fmtBytes(a.bytes), a.measuredKernel > 0 ? pct(100 * (1 - a.xferTime / a.measuredKernel)) : '–',
        a.xferTime > 0 ? fmtBw(a.busbwTime / a.xferTime) : '–']), [0, 1]);
    right.append(el('h3', {}, 'Per message size'));
    const hasBench = data.bench.curves.length > 0;
    table(right, ['group', 'op', 'size', 'ops', 'total', 'p50', 'p99', 'waiting', 'busbw kernel', 'busbw moving data']
      .concat(hasBench ? ['bench', '% of bench'] : []),
      col.buckets.map((b) => {
        const sized = b.size_min_bytes >= 0;
        const row = [groupName(b.group, b.group_desc), b.op, sized ? `${fmtBytes(b.size_min_bytes)}–${fmtBytes(b.size_max_bytes)}` : 'unknown',
          fmtCount(b.count), fmtUs(b.total_us), fmtUs(b.p50_us), fmtUs(b.p99_us),
          b.transfer.waiting_pct == null ? '–' : pct(b.transfer.waiting_pct), sized ? fmtBw(b.kernel_busbw_gbps) : '–',
          xfer(b) == null ? '–' : fmtBw(xfer(b))];
        if (hasBench) {
          const ref = b.transfer.bench_busbw_gbps;
          row.push(ref != null ? fmtBw(ref) : 'not measured', ref != null && xfer(b) != null ? pct(100 * xfer(b) / ref) : '–');
        }
        return row;
      }), [0, 1]);
    right.append(el('p', {class: 'note'}, 'Waiting: the share of the kernel time before the last rank arrived. Busbw kernel: over the ' +
      'whole kernel time, waiting included. Busbw moving data: over the transfer time; the benchmark is held against it.'));
    const unsized = col.buckets.filter((b) => b.size_min_bytes < 0).reduce((n, b) => n + b.count, 0);
    if (unsized > 0)
      right.append(el('p', {class: 'note'}, `${fmtCount(unsized)} operations have no known message size (the trace does not give it: ` +
        'an Nsight Systems export made without --include-blobs=true, see Inputs): counted and timed, no bandwidth.'));
  } else {
    cs.append(el('p', {class: 'empty'}, 'No collectives in these traces.'));
  }

  // ---- waits: stragglers -------------------------------------------------------------------
  const W = col.ranks;
  if (W.rank.length) {
    const ws = section('waits', 'Waiting for the last rank',
      'Per rank, the time in matched collectives split into waiting for the last rank to arrive and the rest (transferring), ' +
      'and how often it arrived last. A rank that is rarely waiting and often last holds the others back.');
    if (col.groups.length)
      table(ws, ['group', 'matched', 'unmatched', 'start skew p50', 'p99', 'max'],
        col.groups.map((g) => [groupName(g.group, g.group_desc), fmtCount(g.matched), fmtCount(g.unmatched),
          fmtUs(g.start_skew_p50_us), fmtUs(g.start_skew_p99_us), fmtUs(g.start_skew_max_us)]), [0]);
    const unit = timeUnit(Math.max(...W.in_collectives_us));
    const many = W.rank.length > 48;
    draw(chartBox(ws), {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
      legend: {top: 0},
      grid: Object.assign({}, baseGrid, {right: 72, bottom: many ? 80 : 56}),
      xAxis: Object.assign({type: 'category', data: W.rank.map(String), name: 'rank', nameGap: 28}, axisName),
      yAxis: [Object.assign({type: 'value', name: `time in collectives (${unit.name})`, nameGap: 52}, axisName),
        Object.assign({type: 'value', name: 'collectives arrived last', nameGap: 44, splitLine: {show: false}, minInterval: 1}, axisName)],
      dataZoom: many ? [{type: 'inside'}, {type: 'slider', height: 18, bottom: 8}] : [],
      series: [
        {name: 'waiting for the last rank', type: 'bar', stack: 'w', color: C.waiting, barMaxWidth: 48,
          data: W.waiting_us.map((v) => round(v / unit.div, 3)), tooltip: {valueFormatter: (v) => v + ' ' + unit.name}},
        {name: 'transferring', type: 'bar', stack: 'w', color: C.transferring, barMaxWidth: 48,
          data: W.in_collectives_us.map((v, i) => round((v - W.waiting_us[i]) / unit.div, 3)), tooltip: {valueFormatter: (v) => v + ' ' + unit.name}},
        {name: 'arrived last (count)', type: 'scatter', yAxisIndex: 1, color: '#000000', symbol: 'diamond',
          symbolSize: many ? 5 : 10, data: W.last_arrivals},
      ],
    });
  }

  // ---- across ranks: stragglers and why, hangs, contention, pipeline, protocols, clocks -------
  // The analyze --json "cross_rank" section as it is (docs/analysis.md, "Cross-rank").
  const X = data.cross_rank;
  if (X) {
    const xs = section('crossrank', 'Across ranks',
      'Which rank the others wait for and why, collectives that never completed on every rank, process groups slowing ' +
      'each other, the pipeline\'s bubble and NCCL\'s algorithm and protocol. Definitions: docs/analysis.md, "Cross-rank".');
    xs.append(el('p', {class: 'lead'}, X.summary));
    const desc = {};
    for (const g of col.groups) desc[g.group] = g.group_desc;
    const gname = (g) => groupName(g, desc[g]);
    const sizeOf = (g, op, lo) => {
      if (lo == null || lo < 0) return 'unknown';
      const b = col.buckets.find((x) => x.group === g && x.op === op && x.size_min_bytes === lo);
      return b ? `${fmtBytes(b.size_min_bytes)}–${fmtBytes(b.size_max_bytes)}` : fmtBytes(lo) + '+';
    };
    const microSign = (t) => t.replace(/(\d) us\b/g, '$1 µs');

    for (const h of X.hangs) xs.append(el('div', {class: 'warn'}, (h.desync ? 'Desync: ' : 'Hang: ') + microSign(h.detail)));

    if (X.stragglers.length) {
      xs.append(el('h3', {}, 'Ranks that arrived last'));
      const why = {
        compute: ['compute ran longer', 'compute'], host_idle: ['GPU idle: the host launched late', 'host_idle'],
        other_collective: ['busy in another group\'s collectives', 'other_collective'], unknown: ['not shown (no kernels)', null], none: ['–', null],
      };
      const perStep = X.stragglers.some((r) => r.delay_wall_us_per_step != null);
      const kernels = X.stragglers.some((r) => r.kernels.length > 0);
      table(xs, ['rank', 'arrived last', 'of matched', 'by chance', 'mean lateness', perStep ? 'delay per step (wall)' : 'delay (wall, whole trace)',
        perStep ? 'others waited per step (rank-time)' : 'others waited (rank-time)', 'why it was late']
        .concat(kernels ? ['kernels that ran longer'] : []),
        X.stragglers.map((r) => {
          const [words, key] = why[r.cause] || [r.cause, null];
          const excess = key && r.excess_us[key] > 0 ? ` (+${fmtUs(r.excess_us[key])})` : '';
          const mixed = r.mixed_cause ? 'mixed: ' + Object.entries(r.cause_shares).filter(([, v]) => v >= 0.05)
            .map(([k, v]) => `${k} ${pct(100 * v)}`).join(', ') : null;
          return [r.rank, fmtCount(r.last_arrivals), fmtCount(r.matched), round(r.chance_arrivals, 1),
            fmtUs(r.mean_lateness_us), fmtUs(perStep ? r.delay_wall_us_per_step : r.delay_wall_us),
            fmtUs(perStep ? r.others_waited_rank_time_us_per_step : r.others_waited_rank_time_us), mixed || words + excess]
            .concat(kernels ? [r.kernels.length ? r.kernels.join(', ') : '–'] : []);
        }), [7, 8]);
      xs.append(el('p', {class: 'note'}, 'By chance: last arrivals expected if the last rank were random. Lateness: its start minus the next ' +
        'latest rank\'s, when it was last. Delay: wall time, its lateness summed. Others waited: rank-time, summed over the ranks that ' +
        'waited. Why: what the rank did more than the others\' median before those collectives (the excess in brackets, summed); mixed ' +
        'when no one cause holds 70% of it.'));
    }

    if (X.contention.length) {
      xs.append(el('h3', {}, 'Process groups slowing each other'));
      const spread = (b) => b.count === 0 ? '–' : !b.enough_samples ? 'too few samples'
        : `${fmtBw(b.busbw_median_gbps)} (${fmtBw(b.busbw_p25_gbps)}–${fmtBw(b.busbw_p75_gbps)})`;
      table(xs, ['group', 'op', 'size', 'alone: ops', 'busbw median (IQR)', 'overlapped: ops', 'busbw median (IQR)', '% of alone', 'while these ran'],
        X.contention.map((c) => [gname(c.group), c.op, sizeOf(c.group, c.op, c.size_min_bytes), fmtCount(c.alone.count), spread(c.alone),
          fmtCount(c.overlapped.count), spread(c.overlapped),
          c.alone.enough_samples && c.overlapped.enough_samples ? pct(100 * c.overlapped.busbw_median_gbps / c.alone.busbw_median_gbps) : '–',
          c.with_groups.map(gname).join(', ') || '–']), [0, 1, 8]);
      xs.append(el('p', {class: 'note'}, `Two groups' collectives ran at once for ${fmtUs(X.contended_time_us)}, summed over ranks. ` +
        'Bus bandwidth of each op over its transfer time (after its last rank arrived), alone and while another group\'s collective ' +
        'moved data on the same rank: the median and quartiles, shown from 5 ops.'));
    }

    const P = X.pipeline;
    if (P.detected) {
      const reps = P.replicas > 1 ? ` × ${P.replicas} replicas` : '';
      xs.append(el('h3', {}, `Pipeline: ${P.stages} stages${reps}, ${P.microbatches || '?'} micro-batches, ${P.schedule || 'schedule not recognised'}`));
      xs.append(el('p', {class: 'note'}, `The bubble (the stages' mean idle share of a step) is ${pct(100 * P.bubble_fraction)}; ` +
        `the schedule's ideal, (p − 1) / (m + p − 1)${P.virtual_stages > 1 ? ' divided by v' : ''}, is ${pct(100 * P.ideal_fraction)}.` +
        (P.pace_stage >= 0 ? ` Stage ${P.pace_stage} sets the pace: ${fmtUs(P.pace_compute_us)} of compute per step against the median stage's ${fmtUs(P.median_compute_us)}.` : '') +
        (P.replicas > 1 ? ` Bubble per replica: ${P.replica_bubble.map((b) => pct(100 * b)).join(', ')}.` : '')));
      if (P.schedule_rule) xs.append(el('p', {class: 'note pipeline-rule'}, `Found by: ${P.schedule_rule}.`));
      const grid = el('div', {class: 'grid2'});
      xs.append(grid);
      const left = el('div'), right = el('div');
      grid.append(left, right);
      const st = P.per_stage;
      const unit = timeUnit(Math.max(1, ...st.map((r) => r.warmup_idle_us + r.steady_idle_us + r.cooldown_idle_us)));
      const phases = [['warm-up', 'warmup_idle_us', C.comm], ['steady', 'steady_idle_us', C.compute], ['cool-down', 'cooldown_idle_us', C.transferring]];
      const box = chartBox(left);
      box.style.height = Math.max(160, Math.min(340, 70 + st.length * 28)) + 'px';
      draw(box, {
        tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: (v) => v + ' ' + unit.name},
        legend: {top: 0},
        grid: Object.assign({}, baseGrid, {left: 72, top: 30, bottom: 44}),
        yAxis: {type: 'category', data: st.map((r) => (P.replicas > 1 ? `r${r.replica} ` : '') + `stage ${r.stage} (rank ${r.rank})`), inverse: true},
        xAxis: Object.assign({type: 'value', name: `idle, summed over steps (${unit.name})`, nameGap: 26}, axisName),
        series: phases.map(([name, f, color]) => ({name: name + ' idle', type: 'bar', stack: 'idle', color, barMaxWidth: 22,
          data: st.map((r) => round(r[f] / unit.div, 3))})),
      });
      table(right, ['replica', 'stage', 'rank', 'bubble share', 'paced bubble', 'compute / step', 'warm-up idle', 'steady idle', 'cool-down idle'],
        st.map((r) => [r.replica, r.stage, r.rank, pct(100 * r.idle_share), r.paced_ideal_share == null ? '-' : pct(100 * r.paced_ideal_share),
          P.idle_known ? fmtUs(r.compute_us) : '-', fmtUs(r.warmup_idle_us), fmtUs(r.steady_idle_us), fmtUs(r.cooldown_idle_us)]), []);
      right.append(el('p', {class: 'note'}, 'Paced bubble: what the schedule leaves the stage when compute is all the step costs, the slowest stage setting the pace (with balanced stages, the ideal).'));
    }

    if (X.protocols.length) {
      xs.append(el('h3', {}, 'NCCL algorithm and protocol'));
      table(xs, ['group', 'op', 'size', 'algorithm', 'protocol', 'channels', 'ops', 'busbw moving data (GB/s)'],
        X.protocols.map((r) => [gname(r.group), r.op, sizeOf(r.group, r.op, r.size_min_bytes), r.algorithm, r.protocol,
          r.channels < 0 ? '?' : r.channels, fmtCount(r.count), r.transfer_busbw_gbps > 0 ? fmtBw(r.transfer_busbw_gbps) : '–']), [0, 1, 3, 4]);
      xs.append(el('p', {class: 'note'}, 'NCCL\'s most frequent choice per group, operation and message size, as the trace records it.'));
    }

    const K = X.clock;
    if (K.applied) {
      xs.append(el('h3', {}, 'Clock alignment'));
      table(xs, ['rank', 'host', 'offset', 'known within ±', 'from collectives'],
        K.offsets.map((o) => [o.rank, o.host || '–', fmtUs(o.offset_us), o.bound_us == null ? 'not bounded' : fmtUs(o.bound_us), fmtCount(o.collectives)]), [1]);
      xs.append(el('p', {class: 'note'}, 'Each rank\'s clock minus the first one\'s, estimated from matched collectives and subtracted ' +
        'before the analysis. ' + K.notes.map(sentence).join(' ')));
    } else {
      xs.append(el('p', {class: 'note'}, 'Clocks not aligned' + (K.mode === 'none' ? ' (--align none: the raw clocks are trusted). ' : '. ') +
        (K.notes.length ? K.notes.map(sentence).join(' ') : 'The ranks share one host\'s clock.')));
    }
  }

  // ---- what-if replay: who the step waits on ---------------------------------------------------
  // analyze --json's "replay" (docs/analysis.md, "What if"): S, the parts whose typical
  // speed would shorten the step most, and S per part and step (the heatmap).
  const R = data.replay;
  if (R) {
    const rs = section('whatif', 'What if a part ran at its typical speed',
      `Replaying each step from its GPU activities (model error ${(100 * R.replay_error).toFixed(2)}%): the step without ` +
      `launch delays takes ${fmtUs(R.no_delay_step_us)}, S = ${R.slowdown.toFixed(3)} times the ideal (every activity at ` +
      'its typical duration). Per part: S with only that part as measured, the rest ideal; a row darker in some steps ' +
      'is where those steps lost their time. commlens whatif answers more.');
    if (R.parts.length)
      table(rs, ['part fixed', 'S of the part', 'predicted step', 'shorter by'],
        R.parts.map((p) => [p.part, p.slowdown.toFixed(3), fmtUs(p.step_us), pct(100 * p.gain)]), [0]);
    // S with only one part as measured, per kind of part, largest first.
    const A = R.attribution;
    if (A) {
      const kinds = [['rank', A.by_rank], ['stage', A.by_stage], ['op kind', A.by_op], ['process group', A.by_group]];
      const rows = [];
      for (const [kind, list] of kinds) for (const x of (list || []).slice(0, 8)) rows.push([kind, x.part, x.slowdown.toFixed(3)]);
      if (rows.length) table(rs, ['by', 'part as measured (the rest ideal)', 'S'], rows, [0, 1]);
    }
    const H = R.heatmap;
    if (H && H.rows.length && H.steps.length) {
      const cells = [];
      let hi = 1;
      H.rows.forEach((r, y) => r.per_step.forEach((v, x) => { cells.push([x, y, round(v, 3)]); hi = Math.max(hi, v); }));
      const box = chartBox(rs, H.rows.length > 12 ? 'tall' : '');
      box.id = 'whatif-heatmap';
      draw(box, {
        tooltip: {formatter: (p) => `${esc(H.rows[p.value[1]].part)}, ${H.steps[p.value[0]] < 0 ? 'whole trace' : 'step ' + esc(H.steps[p.value[0]])}: S ${esc(p.value[2])}`},
        grid: Object.assign({}, baseGrid, {left: 80, right: 90}),
        xAxis: Object.assign({type: 'category', data: H.steps.map((s) => (s < 0 ? 'whole trace' : String(s))), name: 'profiler step', nameGap: 28}, axisName),
        yAxis: {type: 'category', data: H.rows.map((r) => r.part), inverse: true},
        visualMap: {min: 1, max: round(Math.max(hi, 1.01), 2), calculable: true, orient: 'vertical', right: 0, top: 'middle',
          inRange: {color: ['#f7fbff', '#6baed6', '#08306b']}, text: ['S', ''], precision: 2},
        series: [{name: 'S', type: 'heatmap', data: cells}],
      });
    }
  }

  // ---- idle gaps -------------------------------------------------------------------------------
  const idle = data.idle;
  if (idle.streams > 0) {
    const is = section('idle', 'Idle gaps',
      `Gaps between consecutive activities on a GPU stream, summed over ${fmtCount(idle.streams)} streams of every rank. ` +
      'Host wait: the CPU launched the next kernel late; kernel wait: short gaps between queued kernels; other: long waits with work queued.');
    const grid = el('div', {class: 'grid2'});
    is.append(grid);
    const a = el('div'), b = el('div');
    grid.append(a, b);
    a.append(el('h3', {}, 'Gap length histogram'));
    const unit = timeUnit(Math.max(...idle.bins.map((x) => x.time_us)));
    draw(chartBox(a), {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
      legend: {top: 0},
      grid: Object.assign({}, baseGrid, {right: 72}),
      xAxis: Object.assign({type: 'category', data: idle.bins.map((x) => x.bin.replace('us', ' µs').replace('ms', ' ms')), name: 'gap length', nameGap: 28, axisLabel: {interval: 0}}, axisName),
      yAxis: [Object.assign({type: 'value', name: `idle time (${unit.name})`, nameGap: 52}, axisName),
        Object.assign({type: 'value', name: 'gaps', nameGap: 52, splitLine: {show: false}}, axisName)],
      series: [{name: 'idle time', type: 'bar', color: C.compute, barMaxWidth: 56, data: idle.bins.map((x) => round(x.time_us / unit.div, 3)),
        tooltip: {valueFormatter: (v) => v + ' ' + unit.name}},
      {name: 'number of gaps', type: 'line', yAxisIndex: 1, color: C.comm, symbolSize: 7, data: idle.bins.map((x) => x.count)}],
    });
    b.append(el('h3', {}, 'Why the streams waited'));
    const kindColor = {host_wait: C.exposed, kernel_wait: C.comm, other: C.transferring};
    const unitK = timeUnit(Math.max(...idle.kinds.map((x) => x.time_us)));
    draw(chartBox(b), {
      tooltip: {trigger: 'item', formatter: (p) => `${esc(p.name)}: ${esc(fmtUs(p.value * unitK.div))} in ` +
        `${esc(fmtCount(idle.kinds[p.dataIndex].count))} gaps`},
      grid: Object.assign({}, baseGrid, {left: 110, right: 120}),
      xAxis: Object.assign({type: 'value', name: `idle time (${unitK.name})`, nameGap: 28}, axisName),
      yAxis: {type: 'category', data: idle.kinds.map((x) => x.kind.replace('_', ' ')), inverse: true},
      series: [{type: 'bar', barMaxWidth: 40, data: idle.kinds.map((x) => ({value: round(x.time_us / unitK.div, 3), itemStyle: {color: kindColor[x.kind]}})),
        label: {show: true, position: 'right', formatter: (p) => fmtCount(idle.kinds[p.dataIndex].count) + ' gaps'}}],
    });
  }

  // ---- kernels ---------------------------------------------------------------------------------
  if (data.kernels.top_kernels.length) {
    const ks = section('kernels', 'Kernels with the most GPU time',
      `Merged by name over every rank; ${fmtCount(data.kernels.distinct_kernels)} distinct kernels, ${fmtUs(data.kernels.rest_total_us)} in the ones not listed.`);
    table(ks, ['kernel', 'class', 'launches', 'total', 'mean'],
      data.kernels.top_kernels.map((k) => [k.name, k.class, fmtCount(k.count), fmtUs(k.total_us), fmtUs(k.mean_us)]), [0, 1]);
  }

  // ---- counters ----------------------------------------------------------------------------------
  if (data.counters.length) {
    const cn = section('counters', 'Counters over time',
      'NIC throughput, network proxy bytes and GPU metrics the traces hold, resampled into equal time bins (amounts as rates per bin).');
    const grid = el('div', {class: 'grid2'});
    cn.append(grid);
    for (const c of data.counters.slice(0, 8)) {
      const box = el('div');
      grid.append(box);
      box.append(el('h3', {}, `${c.name} (${c.unit})`));
      const xs = c.series[0].values.map((_, i) => round(c.start_s + (i + 0.5) * c.bin_s, 6));
      const unit = c.bin_s * xs.length < 2 ? {div: 1e-3, name: 'ms'} : {div: 1, name: 's'};
      draw(chartBox(box), {
        tooltip: {trigger: 'axis', valueFormatter: (v) => (v == null ? '–' : round(v, 3) + ' ' + c.unit)},
        legend: {top: 0, type: 'scroll'},
        grid: baseGrid,
        xAxis: Object.assign({type: 'value', name: `time since the first GPU activity (${unit.name})`, nameGap: 28, scale: true}, axisName),
        yAxis: Object.assign({type: 'value', name: c.unit, nameGap: 52}, axisName),
        dataZoom: [{type: 'inside'}],
        series: c.series.map((sr, i) => ({name: sr.label, type: 'line', showSymbol: false, connectNulls: false,
          color: SERIES[i % SERIES.length], step: c.rate ? 'middle' : false,
          data: sr.values.map((v, k) => [round(xs[k] / unit.div, 6), v == null ? null : round(v, 4)])})),
      });
    }
  }

  // ---- footer, table of contents -------------------------------------------------------------
  const foot = el('footer');
  if (data.perfetto_href) {
    foot.append('The full timeline of every event: ', el('a', {href: data.perfetto_href}, data.perfetto_href),
      ' (open it in Perfetto, ui.perfetto.dev, with "Open trace file"). ');
  }
  foot.append('Written by commlens report; charts by ' + (window.echarts ? 'echarts ' + echarts.version : 'echarts') +
    ', inlined: this page loads nothing from the network.');
  root.append(foot);
  for (const sec of root.querySelectorAll('section'))
    toc.append(el('a', {href: '#' + sec.id}, sec.querySelector('h2').textContent));
  if (data.perfetto_href) toc.append(el('a', {href: data.perfetto_href}, 'Perfetto trace'));

  window.addEventListener('resize', () => charts.forEach((c) => c.resize()));
  document.body.dataset.charts = String(charts.length);
  document.body.dataset.rendered = 'true';
})();
