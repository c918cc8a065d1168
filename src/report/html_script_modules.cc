// The HTML report's script, part 3b: the module tree (#module-tree) from the
// data's "modules" (html_internal.h). Children are drawn when their module
// is opened, so a large model costs a few DOM nodes; the first divergence's
// module and the modules above it are open and marked. Each module shows the
// worst verdict and the largest relative error of the rows inside it;
// clicking its name goes to that worst row.
#include "html_internal.h"

namespace lockstep::internal {

const std::string_view kReportScriptModules = R"JS(
const MD = D.modules;
const MAX_CHILDREN = 400;  // per module; more are summarised
const mtree = {kids: null, roots: null, open: null, onPath: null};

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

function moduleHtml(i) {
  const kids = mtree.kids[i], open = mtree.open[i] === 1, w = {verdict: MD.verdict[i], error: MD.error[i],
        row: MD.row[i], rows: MD.rows[i]};
  let cls = 'mod v-' + VERDICTS[w.verdict];
  if (mtree.onPath[i]) cls += i === MD.fd ? ' fd-node' : ' fd-path';
  const twisty = kids.length ? '<button type="button" class="tw" aria-expanded="' + open + '" aria-label="' +
      (open ? 'close' : 'open') + '">' + (open ? '\u25be' : '\u25b8') + '</button>' : '<span class="tw"></span>';
  let h = '<li class="' + cls + '" data-m="' + i + '" role="treeitem">' +
          moduleLine(shortName(i), MD.path[i], MD.cls[i], w, twisty);
  if (open && kids.length) h += '<ul role="group">' + childrenHtml(kids) + '</ul>';
  return h + '</li>';
}

function childrenHtml(list) {
  let h = '';
  for (let k = 0; k < list.length && k < MAX_CHILDREN; k++) h += moduleHtml(list[k]);
  if (list.length > MAX_CHILDREN) {
    h += '<li class="more hint">\u2026 and ' + (list.length - MAX_CHILDREN) + ' more modules</li>';
  }
  return h;
}

function renderModules() {
  const root = $('module-tree');
  if (!root || !MD) return;
  let h = childrenHtml(mtree.roots);
  if (MD.outside) {
    h += '<li class="mod outside v-' + VERDICTS[MD.outside.verdict] + '">' +
         moduleLine('(outside any module)', 'rows whose entry construct.json puts in no module', '',
                    MD.outside, '<span class="tw"></span>') + '</li>';
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
  root.addEventListener('click', (e) => {
    const tw = e.target.closest('button.tw');
    if (tw) {
      const i = +tw.closest('li').dataset.m;
      mtree.open[i] ^= 1;
      const li = tw.closest('li');
      li.outerHTML = moduleHtml(i);
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
)JS";

}  // namespace lockstep::internal
