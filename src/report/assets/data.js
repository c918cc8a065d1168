
const D = JSON.parse(document.getElementById('report-data').textContent);
const VERDICTS = ['pass', 'warning', 'error', 'unmatched'];
const SEVERITY = [0, 2, 3, 1];  // per verdict code: error > warning > unmatched > pass
const ROWS = D.row_count;       // rows of the comparison
const FD_ROW = D.first_divergence_row === null ? -1 : D.first_divergence_row;
const FD_RANK = D.first_divergence_rank === undefined ? null : D.first_divergence_rank;

// Python's repr() of a double, from the shortest digits that JavaScript's
// String() gives: fixed notation for exponents -4 to 15 ("0.0001",
// "12.0"), else "1.5e-05", "1e+16".
function pyRepr(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  if (!isFinite(x)) return x !== x ? 'nan' : x > 0 ? 'inf' : '-inf';
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  let digits = m[2] + (m[3] || ''), e = (m[4] ? +m[4] : 0) + m[2].length - 1;
  const lead = digits.length - digits.replace(/^0+/, '').length;
  digits = digits.slice(lead).replace(/0+$/, '') || '0';
  e -= lead;
  if (e < -4 || e >= 16) {
    const mant = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    return m[1] + mant + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
  }
  if (e < 0) return m[1] + '0.' + '0'.repeat(-e - 1) + digits;
  if (digits.length <= e + 1) return m[1] + digits + '0'.repeat(e + 1 - digits.length) + '.0';
  return m[1] + digits.slice(0, e + 1) + '.' + digits.slice(e + 1);
}

// A statistics diff cell derived from statistics a and b (the twin of
// DeriveStat in html_table.cc): a - b, or |a - b| / |b| * 100 %.
const PLAIN = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
function deriveStat(a, b, relative) {
  if (a === b) return '0';
  if (!PLAIN.test(a) || !PLAIN.test(b)) throw new Error('report data: no statistics to derive from');
  const x = Number(a), y = Number(b), diff = x - y;
  if (!relative) return pyRepr(diff);
  return y === 0 ? 'inf' : pyRepr(Math.abs(diff / y * 100)) + '%';
}

// One column: its tokens decoded into n strings. null is the cell to the
// left, k >= 0 dict[k], -k repeats the previous cell's rule k times, true
// is a derived cell (left undefined here, filled by decodeTable), [k,
// "x y"] fills the blanks (U+0001) of dict[k] with the numbers x, y, and a
// string keeps (its first char - 35) chars of the cell above.
function decodeColumn(tokens, n, dict, left) {
  const out = [];
  let fromLeft = false;
  for (let j = 0; j < tokens.length; j++) {
    const t = tokens[j], i = out.length;
    if (t === true) {
      out.push(undefined);
      fromLeft = false;
    } else if (Array.isArray(t)) {
      const parts = dict[t[0]].split('\x01'), nums = t[1].split(' ');
      let s = parts[0];
      for (let k = 1; k < parts.length; k++) s += nums[k - 1] + parts[k];
      out.push(s);
      fromLeft = false;
    } else if (t === null) {
      out.push(left[i]);
      fromLeft = true;
    } else if (typeof t !== 'number') {
      const keep = t.charCodeAt(0) - 35;
      out.push(keep > 0 ? out[i - 1].slice(0, keep) + t.slice(1) : t.slice(1));
      fromLeft = false;
    } else if (t >= 0) {
      out.push(dict[t]);
      fromLeft = false;
    } else {
      for (let k = i; k < i - t; k++) out.push(fromLeft ? left[k] : out[k - 1]);
    }
  }
  if (out.length !== n) throw new Error('report data: a column holds ' + out.length + ' cells, not ' + n);
  return out;
}

function decodeTable(t) {
  const cells = [];
  for (let c = 0; c < t.width; c++) {
    cells.push(decodeColumn(t.cells[c], t.n, t.dict, c > 0 ? cells[c - 1] : null));
  }
  for (const [c, a, b, relative] of t.derive || []) {
    const col = cells[c], x = cells[a], y = cells[b];
    for (let i = 0; i < t.n; i++) {
      if (col[i] === undefined) col[i] = deriveStat(x[i], y[i], relative);
    }
  }
  const ints = (col) => Int32Array.from(decodeColumn(col, t.n, t.dict, null), Number);
  return {n: t.n, index: t.index ? Int32Array.from(t.index) : null, width: t.width, cells: cells,
          verdict: ints(t.verdict), rank: ints(t.rank), step: ints(t.step),
          notes: decodeColumn(t.notes, t.n, t.dict, null)};
}

const TF = D.table_file;
const LOADED = TF ? window.lockstepTable : undefined;  // set by the table file's script
const FULL = !!(LOADED && LOADED.id === TF.id);
const T = decodeTable(FULL ? LOADED.table : D.table);
if (TF) window.lockstepTable = undefined;  // the decoded copy is all we keep
const N = T.n;  // rows in the table: ROWS, or those the page embeds
const TABLE_NOTE = !TF || FULL ? '' :
    'The full table (' + ROWS + ' rows) is in ' + TF.name +
    (LOADED ? ', but the file beside this page belongs to another report.' :
              ', which should be beside this page but is missing or could not be read.') +
    (N ? ' Shown here: the ' + N + ' rows this page embeds (those around the first divergence ' +
         'and the first rows that do not pass).' :
         ' This page embeds no rows: none is near a divergence or fails.');

// The row number (0-based, in the comparison) of table row p, and back
// (-1: not in the table).
const rowOf = T.index ? (p) => T.index[p] : (p) => p;
function posOf(i) {
  if (!T.index) return i >= 0 && i < N ? i : -1;
  let lo = 0, hi = N;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (T.index[mid] < i) lo = mid + 1; else hi = mid;
  }
  return lo < N && T.index[lo] === i ? lo : -1;
}
