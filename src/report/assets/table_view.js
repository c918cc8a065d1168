
const ESC = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
const NUM_RE = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?%?\s*$/i;
const $ = (id) => document.getElementById(id);
// Markup escaped; controls and the characters that reorder or break text
// invisibly (U+202E, U+2028, ...) shown as "\u202e", never obeyed.
const CTRL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c])
    .replace(CTRL_RE, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const state = {verdict: 'all', filter: '', sortCol: -1, dir: 1, page: 0, size: 200,
               selected: -1, metric: ''};
let view = [];        // positions of the rows that pass the filters, in display order
let names = null;     // lower-cased "npu\nbench" name per position, built on first use
const keyCache = {};  // column -> {num, str} sort keys

function colIndex(label, fallback) {
  const i = D.columns.indexOf(label);
  return i >= 0 ? i : fallback;
}
const NPU = colIndex('NPU Name', 0), BENCH = colIndex('Bench Name', 1);

// A cell's numeric value: numbers (also "12.5%"), "inf", "-inf"; else NaN.
function numKey(s) {
  if (NUM_RE.test(s)) return parseFloat(s);
  const t = s.trim().toLowerCase();
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  return NaN;
}

function cellClass(label) {
  if (label === 'NPU Name' || label === 'Bench Name') return 'name';
  return /Stack_Info|Data_name|Err_message/i.test(label) ? 'long' : 'txt';
}

function varies(a) {
  for (let i = 1; i < a.length; i++) if (a[i] !== a[0]) return true;
  return false;
}

function buildColumns() {
  const c = [{label: '#', kind: 'idx'}, {label: 'Verdict', kind: 'verdict'}];
  const steps = T.step.some((s) => s >= 0);
  for (let j = 0; j < T.width; j++) {
    const label = D.columns[j] || 'column ' + (j + 1);
    c.push({label: label, kind: 'cell', ci: j, cls: cellClass(label)});
    // The step beside the op name: the same name recurs every step.
    if (j === NPU && steps) c.push({label: 'Step', kind: 'step', cls: 'step'});
  }
  if (steps && !c.some((x) => x.kind === 'step')) c.push({label: 'Step', kind: 'step', cls: 'step'});
  if (varies(T.rank)) c.push({label: 'Rank', kind: 'rank', cls: 'txt'});
  if (T.notes.some((s) => s)) c.push({label: 'lockstep notes', kind: 'notes', cls: 'long'});
  return c;
}
const cols = buildColumns();
const visible = () => cols.map((c, k) => k).filter((k) => !cols[k].hidden);

// The text of column c at table position p.
function cellText(c, p) {
  switch (c.kind) {
    case 'idx': return String(rowOf(p) + 1);
    case 'verdict': return VERDICTS[T.verdict[p]];
    case 'rank': return String(T.rank[p]);
    case 'step': return String(T.step[p]);
    case 'notes': return T.notes[p];
  }
  return T.cells[c.ci][p];
}

function sortKeys(k) {
  if (keyCache[k]) return keyCache[k];
  const c = cols[k], num = new Float64Array(N), str = new Array(N);
  for (let p = 0; p < N; p++) {
    str[p] = cellText(c, p);
    num[p] = c.kind === 'idx' ? rowOf(p) : c.kind === 'verdict' ? SEVERITY[T.verdict[p]] : numKey(str[p]);
  }
  return (keyCache[k] = {num: num, str: str});
}

function comparator(k, dir) {
  const key = sortKeys(k), num = key.num, str = key.str;
  return (a, b) => {
    const x = num[a], y = num[b], xn = x === x, yn = y === y;
    if (xn && yn) {
      if (x !== y) return x < y ? -dir : dir;
    } else if (xn !== yn) {
      return xn ? -1 : 1;  // numbers before strings, whatever the direction
    } else if (str[a] !== str[b]) {
      if (!str[a] || !str[b]) return str[a] ? -1 : 1;  // empty cells last
      return str[a] < str[b] ? -dir : dir;
    }
    return a - b;
  };
}

function applyView() {
  const q = state.filter.trim().toLowerCase(), want = VERDICTS.indexOf(state.verdict);
  if (q && !names) {
    const npu = T.cells[NPU] || [], bench = T.cells[BENCH] || [];
    names = new Array(N);
    for (let p = 0; p < N; p++) names[p] = ((npu[p] || '') + '\n' + (bench[p] || '')).toLowerCase();
  }
  const out = [];
  for (let p = 0; p < N; p++) {
    if (want >= 0 && T.verdict[p] !== want) continue;
    if (q && names[p].indexOf(q) < 0) continue;
    out.push(p);
  }
  if (state.sortCol >= 0) out.sort(comparator(state.sortCol, state.dir));
  view = out;
  const pages = Math.max(1, Math.ceil(view.length / state.size));
  state.page = Math.min(Math.max(state.page, 0), pages - 1);
}

// Sticky left columns: "#", "Verdict" and the NPU name right after them.
function stickyClass(k) {
  if (k < 2) return ' sticky c' + k;
  return k === 2 && cols[2].kind === 'cell' && cols[2].ci === NPU ? ' sticky c2' : '';
}

function renderHead() {
  let h = '';
  for (const k of visible()) {
    let cls = stickyClass(k);
    if (k === state.sortCol) cls += ' sorted' + (state.dir < 0 ? ' desc' : '');
    h += '<th data-k="' + k + '" class="' + cls.trim() + '" title="sort by ' + esc(cols[k].label) +
         '">' + esc(cols[k].label) + '</th>';
  }
  $('head').innerHTML = h;
}

function cellHtml(k, p) {
  const c = cols[k], s = cellText(c, p), sticky = stickyClass(k);
  if (c.kind === 'idx') return '<td class="idx' + sticky + '">' + s + '</td>';
  if (c.kind === 'verdict') {
    const note = T.notes[p] ? ' title="' + esc(T.notes[p]) + '"' : '';
    return '<td class="' + sticky + '"><span class="vb v-' + s + '"' + note + '>' + s + '</span></td>';
  }
  const cls = numKey(s) === numKey(s) ? 'num' : c.cls;
  const tip = s.length > 24 && cls !== 'num' ? ' title="' + esc(s) + '"' : '';
  return '<td class="' + cls + sticky + '"' + tip + '>' + esc(s) + '</td>';
}

// A row of the first divergence's rank before it that does not pass: the
// first-divergence rule walked past it (its error is what its inputs'
// explains, or rounding noise), so it is not coloured as a cause.
function walkedPast(p, i) {
  const v = VERDICTS[T.verdict[p]];
  return FD_ROW >= 0 && i < FD_ROW && (v === 'error' || v === 'warning') &&
         String(T.rank[p]) === String(FD_RANK);
}

function rowHtml(p, vis) {
  const i = rowOf(p);
  let cls = 'v-' + VERDICTS[T.verdict[p]], tip = '';
  if (i === FD_ROW) cls += ' fd';
  if (walkedPast(p, i)) {
    cls += ' pre-fd';
    tip = ' title="Before the first divergence: its error is what its inputs\u2019 error ' +
          'explains (or rounding noise); the first-divergence rule walked past it"';
  }
  if (i === state.selected) cls += ' selected';
  let h = '<tr class="' + cls + '" data-i="' + i + '"' + tip + '>';
  for (const k of vis) h += cellHtml(k, p);
  return h + '</tr>';
}

function renderTable() {
  const start = state.page * state.size, end = Math.min(view.length, start + state.size);
  const vis = visible(), parts = [];
  for (let p = start; p < end; p++) parts.push(rowHtml(view[p], vis));
  $('rows').innerHTML = parts.join('');
  $('row-count').textContent = String(view.length);
  $('range').textContent = view.length ? (start + 1) + '\u2013' + end : '0';
  $('filtered-note').textContent = view.length === N ? '' : '(filtered from ' + N + ')';
  const pages = Math.max(1, Math.ceil(view.length / state.size));
  $('page-of').textContent = 'page ' + (state.page + 1) + ' / ' + pages;
  $('prev').disabled = state.page === 0;
  $('next').disabled = state.page >= pages - 1;
  for (const b of document.querySelectorAll('.count')) {
    b.classList.toggle('active', b.dataset.verdict === state.verdict);
  }
}

function detailHtml(p) {
  let h = '<dl class="kv"><dt>row</dt><dd>' + (rowOf(p) + 1) + ' \u00b7 ' + VERDICTS[T.verdict[p]] +
          ' \u00b7 rank ' + T.rank[p] + (T.step[p] >= 0 ? ' \u00b7 step ' + T.step[p] : '') + '</dd>';
  if (T.notes[p]) h += '<dt>lockstep</dt><dd>' + esc(T.notes[p]) + '</dd>';
  for (const c of cols) {
    if (c.kind === 'cell') h += '<dt>' + esc(c.label) + '</dt><dd>' + esc(cellText(c, p)) + '</dd>';
  }
  return h + '</dl>';
}

function toggleDetail(tr) {
  const next = tr.nextElementSibling;
  if (next && next.classList.contains('detail')) return next.remove();
  const d = document.createElement('tr'), width = $('table-wrap').clientWidth - 40;
  d.className = 'detail';
  d.innerHTML = '<td colspan="' + visible().length + '"><div style="position:sticky;left:14px;' +
                'max-width:' + width + 'px">' + detailHtml(posOf(+tr.dataset.i)) + '</div></td>';
  tr.after(d);
}

function readHash() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  state.verdict = VERDICTS.indexOf(p.get('verdict')) >= 0 ? p.get('verdict') : 'all';
  state.filter = p.get('filter') || '';
  const k = cols.findIndex((c) => c.label === p.get('sort'));
  state.sortCol = k;
  state.dir = p.get('dir') === 'desc' ? -1 : 1;
  state.page = Math.max(0, (parseInt(p.get('page'), 10) || 1) - 1);
  if (p.get('metric')) state.metric = p.get('metric');
  const row = parseInt(p.get('row'), 10);
  return row >= 1 && row <= ROWS ? row - 1 : -1;
}

function writeHash() {
  const p = new URLSearchParams();
  if (state.verdict !== 'all') p.set('verdict', state.verdict);
  if (state.filter) p.set('filter', state.filter);
  if (state.sortCol >= 0) {
    p.set('sort', cols[state.sortCol].label);
    p.set('dir', state.dir < 0 ? 'desc' : 'asc');
  }
  if (state.page > 0) p.set('page', String(state.page + 1));
  const h = p.toString();
  try {
    history.replaceState(null, '', h ? '#' + h : location.pathname + location.search);
  } catch (e) {
    // Some browsers refuse history updates for file:// pages; the view still works.
  }
}
