
const MD = D.modules;
const MAX_CHILDREN = 400;  // per module; more are summarised
// Levels drawn nested; below, each level is drawn beside its parent (a
// chain 20,000 deep would indent past any page and make layout crawl).
const MAX_NEST = 32;
const mtree = {kids: null, roots: null, open: null, onPath: null, depth: null};
// Which rows the verdicts cover: the first divergence's step (MD.step) until
// "all steps" is ticked; every step when the data has no step columns.
let mAllSteps = !MD || MD.step == null;

// Module i's worst row in the steps shown.
function mworst(i) {
  return mAllSteps ? {verdict: MD.verdict[i], error: MD.error[i], row: MD.row[i], rows: MD.rows[i]}
                   : {verdict: MD.step_verdict[i], error: MD.step_error[i], row: MD.step_row[i],
                      rows: MD.step_rows[i]};
}

function shortName(i) {
  const p = MD.path[i], up = MD.parent[i];
  if (up < 0) return p;
  const a = MD.path[up];
  return p.length > a.length + 1 && p.startsWith(a) && p[a.length] === '.' ? p.slice(a.length + 1) : p;
}

function buildModuleTree() {
  const n = MD.path.length, kids = [], roots = [];
  for (let i = 0; i < n; i++) kids.push([]);
  for (let i = 0; i < n; i++) (MD.parent[i] >= 0 ? kids[MD.parent[i]] : roots).push(i);
  // Execution order: by each module's first row; modules without rows last.
  const order = (a, b) => ((MD.first[a] < 0) - (MD.first[b] < 0)) || (MD.first[a] - MD.first[b]) || (a - b);
  roots.sort(order);
  kids.forEach((k) => k.sort(order));
  mtree.kids = kids;
  mtree.roots = roots;
  mtree.open = new Uint8Array(n);
  mtree.onPath = new Uint8Array(n);
  mtree.depth = new Int32Array(n);  // as last drawn
  for (let m = MD.fd; m >= 0; m = MD.parent[m]) {
    mtree.onPath[m] = 1;
    if (m !== MD.fd) mtree.open[m] = 1;
  }
  if (roots.length === 1) mtree.open[roots[0]] = 1;
}

function errText(e) {
  return e === null || e === undefined ? '' : 'rel. err ' + (e === 'inf' ? 'inf' : fmt(e));
}

function moduleLine(name, title, kind, w, twisty) {
  const v = VERDICTS[w.verdict];
  return '<div class="mrow" title="' + esc(title) + '">' + twisty +
         '<a class="mname" href="#row=' + (w.row + 1) + '" data-row="' + w.row + '">' + esc(name) + '</a>' +
         (kind ? '<span class="mcls">' + esc(kind) + '</span>' : '') +
         '<span class="vb v-' + v + '">' + v + '</span><span class="merr">' + errText(w.error) + '</span>' +
         '<span class="mrows">' + w.rows + (w.rows === 1 ? ' row' : ' rows') + '</span></div>';
}

// A module's <li> at nesting depth `d` and its line (listHtml closes it).
function moduleOpen(i, open, d) {
  const kids = mtree.kids[i], w = mworst(i);
  let cls = 'mod v-' + VERDICTS[w.verdict];
  if (mtree.onPath[i]) cls += i === MD.fd ? ' fd-node' : ' fd-path';
  const twisty = kids.length ? '<button type="button" class="tw" aria-expanded="' + open + '" aria-label="' +
      (open ? 'close' : 'open') + '">' + (open ? '\u25be' : '\u25b8') + '</button>' : '<span class="tw"></span>';
  if (d >= MAX_NEST) cls += ' flat';
  mtree.depth[i] = d;
  return '<li class="' + cls + '" data-m="' + i + '" role="treeitem">' +
         moduleLine(shortName(i), MD.path[i], MD.cls[i], w, twisty);
}

// The modules of `list` at depth `depth` (at most MAX_CHILDREN, then a line
// for the rest), each with its open descendants. Drawn with an explicit
// stack, not by recursion: a construct.json can nest modules 20,000 deep on
// the open path to the first divergence, past any script stack.
function listHtml(list, depth) {
  const parts = [], todo = [];
  const pushList = (l, d) => {
    if (l.length > MAX_CHILDREN) {
      todo.push('<li class="more hint">\u2026 and ' + (l.length - MAX_CHILDREN) + ' more modules</li>');
    }
    for (let k = Math.min(l.length, MAX_CHILDREN) - 1; k >= 0; k--) todo.push([l[k], d]);
  };
  pushList(list, depth);
  while (todo.length) {
    const t = todo.pop();
    if (typeof t === 'string') {
      parts.push(t);
      continue;
    }
    const [m, d] = t, open = mtree.open[m] === 1 && mtree.kids[m].length > 0;
    parts.push(moduleOpen(m, open, d));
    if (open && d + 1 < MAX_NEST) {
      parts.push('<ul role="group">');
      todo.push('</ul></li>');
    } else {
      parts.push('</li>');
    }
    if (open) pushList(mtree.kids[m], d + 1);  // nested, or beside it
  }
  return parts.join('');
}

function renderModules() {
  const root = $('module-tree');
  if (!root || !MD) return;
  let h = listHtml(mtree.roots, 0);
  const outside = mAllSteps ? MD.outside : MD.step_outside;
  if (outside) {
    h += '<li class="mod outside v-' + VERDICTS[outside.verdict] + '">' +
         moduleLine('(outside any module)', 'rows whose entry construct.json puts in no module', '',
                    outside, '<span class="tw"></span>') + '</li>';
  }
  root.innerHTML = h;
  const fd = root.querySelector('li.fd-node > .mrow'), box = $('module-box');
  if (fd) {  // scrolled to only when it is below the box's fold
    const at = fd.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    if (at + fd.offsetHeight > box.clientHeight) box.scrollTop = at - box.clientHeight / 3;
  }
}

function bindModuleEvents() {
  const root = $('module-tree');
  if (!root || !MD) return;
  const all = $('module-all-steps');
  if (all) {
    all.addEventListener('change', () => {
      mAllSteps = all.checked;
      renderModules();
    });
  }
  root.addEventListener('click', (e) => {
    const tw = e.target.closest('button.tw');
    if (tw) {
      const li = tw.closest('li'), i = +li.dataset.m, d = mtree.depth[i];
      mtree.open[i] ^= 1;
      // A module drawn flat has its descendants beside it: draw all again.
      if (d + 1 >= MAX_NEST) renderModules();
      else li.outerHTML = listHtml([i], d);
      return;
    }
    const a = e.target.closest('a.mname');
    if (a) {
      e.preventDefault();
      goToRow(+a.dataset.row);
    }
  });
}

function initModules() {
  if (!MD) return;
  buildModuleTree();
  renderModules();
  bindModuleEvents();
}
