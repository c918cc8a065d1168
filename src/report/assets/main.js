
function refresh(write) {
  applyView();
  renderHead();
  renderTable();
  if (write) writeHash();
}

function syncControls() {
  $('filter').value = state.filter;
  $('verdict-filter').value = state.verdict;
  $('page-size').value = String(state.size);
}

function showTableNote(text) {
  $('table-note').textContent = text;
  $('table-note').hidden = !text;
}

// Shows row i (0-based): keeps the filters when the row passes them.
function goToRow(i) {
  if (!(i >= 0 && i < ROWS)) return;
  const p = posOf(i);
  if (p < 0) {
    showTableNote('Row ' + (i + 1) + ' is not among the rows this page embeds. ' + TABLE_NOTE);
    return;
  }
  let pos = view.indexOf(p);
  if (pos < 0) {
    state.verdict = 'all';
    state.filter = '';
    syncControls();
    applyView();
    renderHead();
    pos = view.indexOf(p);
  }
  state.page = Math.floor(pos / state.size);
  state.selected = i;
  renderTable();
  writeHash();
  drawMarks();
  const tr = $('rows').querySelector('tr[data-i="' + i + '"]');
  if (tr) {
    tr.scrollIntoView({block: 'center'});
    tr.classList.add('flash');
  }
}

function selectRow(tr) {
  const old = $('rows').querySelector('tr.selected');
  if (old) old.classList.remove('selected');
  tr.classList.add('selected');
  state.selected = +tr.dataset.i;
  drawMarks();
  toggleDetail(tr);
}

function buildColumnPicker() {
  let h = '';
  cols.forEach((c, k) => {
    if (k >= 2) h += '<label><input type="checkbox" data-k="' + k + '" checked> ' + esc(c.label) + '</label>';
  });
  $('col-list').innerHTML = h;
  $('col-list').addEventListener('change', (e) => {
    cols[+e.target.dataset.k].hidden = !e.target.checked;
    renderHead();
    renderTable();
  });
}

function bindTableEvents() {
  let timer = 0;
  $('filter').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.filter = $('filter').value; state.page = 0; refresh(true); },
                       N > 20000 ? 200 : 60);
  });
  $('verdict-filter').addEventListener('change', () => {
    state.verdict = $('verdict-filter').value;
    state.page = 0;
    refresh(true);
  });
  for (const b of document.querySelectorAll('.count')) {
    b.addEventListener('click', () => {
      state.verdict = b.dataset.verdict;
      state.page = 0;
      syncControls();
      refresh(true);
    });
  }
  $('head').addEventListener('click', (e) => {
    const th = e.target.closest('th');
    if (!th) return;
    const k = +th.dataset.k;
    state.dir = state.sortCol === k ? -state.dir : 1;
    state.sortCol = k;
    state.page = 0;
    refresh(true);
  });
  $('rows').addEventListener('click', (e) => {
    const tr = e.target.closest('tr[data-i]');
    if (tr) selectRow(tr);
  });
}

function turnPage(delta) {
  state.page += delta;
  refresh(true);
  $('table-wrap').scrollTop = 0;
}

function bindPagerEvents() {
  $('prev').addEventListener('click', () => turnPage(-1));
  $('next').addEventListener('click', () => turnPage(1));
  $('page-size').addEventListener('change', () => {
    state.size = parseInt($('page-size').value, 10) || 200;
    state.page = 0;
    refresh(true);
  });
  document.addEventListener('keydown', (e) => {
    const typing = /INPUT|SELECT|TEXTAREA/.test(e.target.tagName);
    if (e.key === 'Escape' && e.target === $('filter')) {
      $('filter').value = '';
      $('filter').dispatchEvent(new Event('input'));
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === '/') { e.preventDefault(); $('filter').focus(); }
    if (e.key === 'n' && !$('next').disabled) turnPage(1);
    if (e.key === 'p' && !$('prev').disabled) turnPage(-1);
  });
}

function bindPlotEvents() {
  const svg = $('plot');
  svg.addEventListener('mousemove', showTip);
  svg.addEventListener('mouseleave', hideTip);
  svg.addEventListener('click', (e) => goToRow(rowAtPointer(e)));
  $('plot-metric').addEventListener('change', () => { state.metric = $('plot-metric').value; drawPlot(); });
  let pending = false;
  window.addEventListener('resize', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawPlot(); });
  });
}

function init() {
  showTableNote(TABLE_NOTE);
  const row = readHash();
  buildColumnPicker();
  pickMetric();
  syncControls();
  refresh(false);
  drawPlot();
  initModules();
  bindTableEvents();
  bindPagerEvents();
  bindPlotEvents();
  const link = $('fd-link');
  if (link) link.addEventListener('click', (e) => { e.preventDefault(); goToRow(FD_ROW); });
  window.addEventListener('hashchange', () => {
    const r = readHash();
    syncControls();
    refresh(false);
    if (r >= 0) goToRow(r);
  });
  if (row >= 0) goToRow(row);
  document.body.setAttribute('data-ready', '1');
  document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
}

init();
