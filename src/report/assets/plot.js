
const METRICS = {
  cosine: {label: 'Cosine', log: false, low: true},
  one_minus_cos: {label: '1 \u2212 cosine (log scale)', log: true},
  max_rel_err: {label: 'Max relative error (log scale)', log: true},
  max_abs_err: {label: 'Max absolute error (log scale)', log: true},
};
const PL = D.plot;
const NP = PL.index ? PL.index.length : N;  // points
const pointRow = PL.index ? (j) => PL.index[j] : (j) => j;
const pointVerdict = PL.index ? (j) => PL.verdict[j] : (j) => T.verdict[j];
const valCache = {};
let P = null;  // the plot as last drawn: geometry and bins, for hovering

function metricValues(name) {
  if (valCache[name]) return valCache[name];
  const src = PL.metrics[name] || [], out = new Float64Array(NP);
  for (let j = 0; j < NP; j++) {
    const v = src[j];
    out[j] = v === null || v === undefined ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v;
  }
  return (valCache[name] = out);
}

function hasValues(name) {
  const v = metricValues(name);
  for (let j = 0; j < NP; j++) if (isFinite(v[j]) && (!METRICS[name].log || v[j] > 0)) return true;
  return false;
}

function pickMetric() {
  const avail = Object.keys(METRICS).filter(hasValues);
  $('plot-metric').innerHTML = avail.map((m) => '<option value="' + m + '">' +
                                         METRICS[m].label + '</option>').join('');
  if (avail.indexOf(state.metric) < 0) {
    const stats = D.summary.mode === 'statistics' && avail.indexOf('max_rel_err') >= 0;
    state.metric = stats ? 'max_rel_err' : avail.indexOf('cosine') >= 0 ? 'cosine' : avail[0] || '';
  }
  $('plot-metric').value = state.metric;
}

function fmt(v) {
  if (!isFinite(v)) return String(v).replace('Infinity', 'inf');
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e6) ? v.toExponential(3) : String(+v.toPrecision(7));
}

function niceTicks(lo, hi, n) {
  let step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
  const err = (hi - lo) / n / step;
  step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
  const t = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push(+v.toPrecision(12));
  return t;
}

// Linear range {lo, hi}; or, on a log scale, {bottom, top} in decades with a
// band below for zeros and one above for +inf when the data have them.
function yRange(vals, m) {
  let lo = Infinity, hi = -Infinity, zero = false, inf = false;
  for (let j = 0; j < NP; j++) {
    const v = vals[j];
    if (m.log && v <= 0) zero = true;
    if (v === Infinity) inf = true;
    if (!isFinite(v) || (m.log && v <= 0)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (m.log) {
    if (lo === Infinity) [lo, hi] = [1e-8, 1];
    const a = Math.floor(Math.log10(lo)), b = Math.max(Math.ceil(Math.log10(hi)), a + 1);
    return {a: a, b: b, zero: zero, inf: inf, bottom: a - (zero ? 1 : 0), top: b + (inf ? 1 : 0)};
  }
  if (lo === Infinity) [lo, hi] = [0, 1];
  if (state.metric === 'cosine') [lo, hi] = [Math.min(lo, 0.98), Math.max(hi, 1)];
  if (hi - lo < 1e-12) [lo, hi] = [lo - 0.5, hi + 0.5];
  const pad = (hi - lo) * 0.04;
  return {lo: lo - pad, hi: hi + pad};
}

function plotGeometry(W, H, vals, m) {
  const g = {m: {l: 62, r: 16, t: 20, b: 40}, W: W, H: H, vals: vals, metric: m};
  g.pw = Math.max(10, W - g.m.l - g.m.r);
  g.ph = Math.max(10, H - g.m.t - g.m.b);
  const r = (g.range = yRange(vals, m));
  g.x = (i) => g.m.l + (ROWS > 1 ? i / (ROWS - 1) : 0.5) * g.pw;
  g.y = (v) => {
    let f;
    if (m.log) {
      const lv = v === Infinity ? r.top : v <= 0 ? r.bottom : Math.min(Math.max(Math.log10(v), r.a), r.b);
      f = (lv - r.bottom) / (r.top - r.bottom);
    } else {
      f = (v - r.lo) / (r.hi - r.lo);
    }
    return g.m.t + g.ph * (1 - Math.min(Math.max(f, 0), 1));
  };
  g.nb = Math.max(1, Math.min(ROWS, Math.floor(g.pw)));
  return g;
}

// [{v, label}] for the y axis.
function yTicks(g) {
  const r = g.range;
  if (!g.metric.log) return niceTicks(r.lo, r.hi, 5).map((v) => ({v: v, label: fmt(v)}));
  const every = Math.max(1, Math.ceil((r.b - r.a) / 6)), t = [];
  for (let e = r.a; e <= r.b; e += every) {
    t.push({v: Math.pow(10, e), label: e >= -3 && e <= 3 ? String(+Math.pow(10, e).toFixed(3)) : '1e' + e});
  }
  if (r.zero) t.push({v: 0, label: '0'});
  if (r.inf) t.push({v: Infinity, label: 'inf'});
  return t;
}

// Per bin, the point of the worst value (best) and of the most severe verdict.
function binPoints(g) {
  const best = new Int32Array(g.nb).fill(-1), worst = new Int32Array(g.nb).fill(-1);
  const vals = g.vals, low = g.metric.low;
  for (let j = 0; j < NP; j++) {
    const b = Math.floor(pointRow(j) * g.nb / ROWS), v = vals[j], c = best[b], w = worst[b];
    if (v === v && (c < 0 || (low ? v < vals[c] : v > vals[c]))) best[b] = j;
    if (w < 0 || SEVERITY[pointVerdict(j)] > SEVERITY[pointVerdict(w)]) worst[b] = j;
  }
  g.best = best;
  g.worst = worst;
}

function svgAxes(g) {
  const m = g.m, r = g.range, x0 = m.l, x1 = m.l + g.pw, yb = m.t + g.ph;
  let s = '';
  for (const t of yTicks(g)) {
    const y = g.y(t.v).toFixed(1);
    s += '<line class="grid" x1="' + x0 + '" x2="' + x1 + '" y1="' + y + '" y2="' + y + '"/>' +
         '<text x="' + (x0 - 6) + '" y="' + y + '" dy="4" text-anchor="end">' + t.label + '</text>';
  }
  for (const v of niceTicks(1, Math.max(ROWS, 2), 8)) {
    if (v !== Math.round(v) || v > ROWS) continue;
    const x = g.x(v - 1).toFixed(1);
    s += '<line class="axis" x1="' + x + '" x2="' + x + '" y1="' + yb + '" y2="' + (yb + 4) + '"/>' +
         '<text x="' + x + '" y="' + (yb + 24) + '" text-anchor="' +
         (x > x1 - 24 ? 'end' : 'middle') + '">' + v + '</text>';
  }
  s += '<line class="axis" x1="' + x0 + '" x2="' + x1 + '" y1="' + yb + '" y2="' + yb + '"/>';
  s += '<text x="' + x1 + '" y="' + (g.H - 2) + '" text-anchor="end">row (op sequence) \u2192</text>';
  if (state.metric === 'cosine' && r.lo < 0.99 && r.hi > 0.99) {
    const y = g.y(0.99).toFixed(1);
    s += '<line class="thr" x1="' + x0 + '" x2="' + x1 + '" y1="' + y + '" y2="' + y + '"/>' +
         '<text x="' + (x1 - 4) + '" y="' + y + '" dy="-3" text-anchor="end">0.99</text>';
  }
  return s;
}

function svgSeries(g) {
  let path = '', pen = false;
  const dots = {pass: '', unmatched: '', warning: '', error: ''};
  for (let b = 0; b < g.nb; b++) {
    const j = g.best[b];
    if (j < 0) { pen = false; continue; }
    const px = g.x(pointRow(j)).toFixed(1), py = g.y(g.vals[j]).toFixed(1), v = VERDICTS[pointVerdict(j)];
    path += (pen ? 'L' : 'M') + px + ' ' + py;
    pen = true;
    dots[v] += '<circle class="v-' + v + '" cx="' + px + '" cy="' + py + '" r="' +
               (v === 'pass' ? 1.8 : 3.4) + '"/>';
  }
  let rug = '';
  const yr = g.m.t + g.ph + 6, w = Math.max(1.5, g.pw / g.nb).toFixed(1);
  for (let b = 0; b < g.nb; b++) {
    const j = g.worst[b], v = j >= 0 ? VERDICTS[pointVerdict(j)] : 'pass';
    if (v !== 'pass') {
      rug += '<rect class="v-' + v + '" x="' + (g.x(pointRow(j)) - w / 2).toFixed(1) + '" y="' + yr +
             '" width="' + w + '" height="6"/>';
    }
  }
  return '<path class="line" d="' + path + '"/>' + rug + dots.pass + dots.unmatched +
         dots.warning + dots.error;
}

// Where the step changes along the rows (the data's "steps"): a dotted line
// and, where there is room, "step N".
function svgSteps(g) {
  const marks = D.steps || [];
  let s = '', lastLabel = -Infinity;
  for (let k = 0; k < marks.length; k++) {
    const x = g.x(Math.max(0, marks[k][0] - 0.5));
    if (k > 0) {
      s += '<line class="stepline" x1="' + x.toFixed(1) + '" x2="' + x.toFixed(1) + '" y1="' + g.m.t +
           '" y2="' + (g.m.t + g.ph) + '"/>';
    }
    if (x - lastLabel >= 56) {
      s += '<text class="steplabel" x="' + (x + 4).toFixed(1) + '" y="' + (g.m.t + 11) + '">step ' +
           marks[k][1] + '</text>';
      lastLabel = x;
    }
  }
  return s;
}

function svgMarks(g) {
  let s = '';
  const top = g.m.t - 4, bottom = g.m.t + g.ph + 12;
  if (FD_ROW >= 0) {
    const x = g.x(FD_ROW), left = x > g.m.l + g.pw * 0.7;
    s += '<line class="fdline" x1="' + x + '" x2="' + x + '" y1="' + top + '" y2="' + bottom + '"/>' +
         '<text class="fdlabel" x="' + (x + (left ? -5 : 5)) + '" y="' + (g.m.t - 8) + '" text-anchor="' +
         (left ? 'end' : 'start') + '">first divergence #' + (FD_ROW + 1) + '</text>';
  }
  if (state.selected >= 0) {
    const x = g.x(state.selected);
    s += '<line class="sel" x1="' + x + '" x2="' + x + '" y1="' + g.m.t + '" y2="' + bottom + '"/>';
  }
  return s;
}

function drawPlot() {
  const svg = $('plot'), W = svg.clientWidth || 900, H = svg.clientHeight || 270;
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  if (!state.metric || !NP) {
    P = null;
    $('plot-title').textContent = 'Plot';
    svg.innerHTML = '<text class="empty" x="' + W / 2 + '" y="' + H / 2 + '" text-anchor="middle">' +
                    (ROWS ? 'No numeric metric to plot (' + esc(D.summary.mode) + ' mode)' : 'No rows') +
                    '</text>';
    return;
  }
  const m = METRICS[state.metric];
  $('plot-title').textContent = m.label.replace(/ \(log scale\)/, '') + ' along the op sequence';
  P = plotGeometry(W, H, metricValues(state.metric), m);
  binPoints(P);
  svg.innerHTML = svgAxes(P) + svgSteps(P) + svgSeries(P) + '<g id="plot-marks">' + svgMarks(P) + '</g>' +
                  '<g id="plot-hover"></g>';
}

function drawMarks() {
  if (P) $('plot-marks').innerHTML = svgMarks(P);
}

// The point under the pointer (-1: none).
function pointAtPointer(e) {
  if (!P) return -1;
  const rect = $('plot').getBoundingClientRect(), px = e.clientX - rect.left;
  if (px < P.m.l - 8 || px > P.m.l + P.pw + 8) return -1;
  const b = Math.min(P.nb - 1, Math.max(0, Math.floor((px - P.m.l) / P.pw * P.nb)));
  return P.best[b] >= 0 ? P.best[b] : P.worst[b];
}

function rowAtPointer(e) {
  const j = pointAtPointer(e);
  return j < 0 ? -1 : pointRow(j);
}

function showTip(e) {
  const j = pointAtPointer(e), tip = $('plot-tip');
  if (j < 0) return hideTip();
  const i = pointRow(j), p = posOf(i), x = P.x(i), v = P.vals[j], y = v === v ? P.y(v) : P.m.t + P.ph;
  const name = p >= 0 ? (T.cells[NPU] || [])[p] || '' : '', note = p >= 0 ? T.notes[p] : '';
  $('plot-hover').innerHTML = '<line class="hover" x1="' + x + '" x2="' + x + '" y1="' + P.m.t +
      '" y2="' + (P.m.t + P.ph) + '"/><circle class="hover" cx="' + x + '" cy="' + y +
      '" r="6" fill="none"/>';
  tip.innerHTML = '#' + (i + 1) + ' <b>' + esc(name) + '</b><br>' +
      esc(P.metric.label.replace(/ \(log scale\)/, '')) + ' ' + (v === v ? fmt(v) : 'n/a') +
      ' \u00b7 ' + VERDICTS[pointVerdict(j)] + stepOfRow(i) + (note ? '<br>' + esc(note) : '');
  tip.hidden = false;
  // SVG elements have no offsetLeft: place the tip from client rectangles.
  const card = $('plot').parentNode.getBoundingClientRect(), box = $('plot').getBoundingClientRect();
  const ox = box.left - card.left, oy = box.top - card.top;
  let left = ox + x + 14;
  if (left + tip.offsetWidth > card.width - 8) left = ox + x - tip.offsetWidth - 14;
  tip.style.left = Math.max(4, left) + 'px';
  tip.style.top = (oy + y + 12) + 'px';
}

// " · step N" for row i, from the step marks ("" without them).
function stepOfRow(i) {
  const marks = D.steps || [];
  let lo = 0, hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid][0] <= i) lo = mid + 1; else hi = mid;
  }
  return lo > 0 ? ' \u00b7 step ' + marks[lo - 1][1] : '';
}

function hideTip() {
  $('plot-tip').hidden = true;
  if (P) $('plot-hover').innerHTML = '';
}
