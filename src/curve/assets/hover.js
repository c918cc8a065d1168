(function () {
'use strict';
const NS = 'http://www.w3.org/2000/svg';
const num = (s) => (s === '' ? NaN : Number(s));
const fmt = (v) => !isFinite(v) ? String(v) : Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3)
    ? v.toExponential(4) : String(+v.toPrecision(6));

function series(g) {
  const steps = g.dataset.steps ? g.dataset.steps.split(',').map(Number) : [];
  const values = g.dataset.values !== undefined && steps.length ? g.dataset.values.split(',').map(num) : [];
  return {name: g.dataset.name, color: g.dataset.color, ref: g.dataset.ref === '1', steps: steps, values: values};
}

// The index of the point nearest to `step` (-1: none).
function nearest(steps, step) {
  let lo = 0, hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid] < step) lo = mid + 1; else hi = mid;
  }
  if (lo > 0 && (lo === steps.length || step - steps[lo - 1] < steps[lo] - step)) lo--;
  return lo < steps.length ? lo : -1;
}

function attach(svg) {
  const p = (svg.dataset.plot || '').split(',').map(Number);
  if (p.length < 9 || p.some((v) => v !== v)) return;
  const [left, top, width, height, x0, x1, y0, y1, log] = p;
  const all = Array.from(svg.querySelectorAll('g.curve-data')).map(series);
  const X = (s) => left + (s - x0) / (x1 - x0 || 1) * width;
  const Y = (v) => {
    const d = log ? Math.log10(v) : v;
    return top + height - (Math.min(Math.max(d, y0), y1) - y0) / (y1 - y0 || 1) * height;
  };
  const rule = document.createElementNS(NS, 'line');
  rule.setAttribute('class', 'curve-hover');
  rule.setAttribute('stroke', '#888');
  rule.setAttribute('stroke-dasharray', '3,3');
  rule.setAttribute('visibility', 'hidden');
  svg.appendChild(rule);
  const dots = all.map((s) => {
    const c = document.createElementNS(NS, 'circle');
    c.setAttribute('r', '4');
    c.setAttribute('fill', s.color);
    c.setAttribute('stroke', '#fff');
    c.setAttribute('visibility', 'hidden');
    svg.appendChild(c);
    return c;
  });
  const host = svg.parentNode;
  if (getComputedStyle(host).position === 'static') host.style.position = 'relative';
  const tip = document.createElement('div');
  tip.className = 'curve-tip';
  tip.hidden = true;
  tip.style.cssText = 'position:absolute;pointer-events:none;background:#1f2a3d;color:#e9edf3;' +
      'padding:6px 9px;border-radius:6px;font:12px/1.5 sans-serif;white-space:nowrap;z-index:5;' +
      'box-shadow:0 4px 14px rgba(0,0,0,.25)';
  host.appendChild(tip);
  const hide = () => {
    tip.hidden = true;
    rule.setAttribute('visibility', 'hidden');
    dots.forEach((d) => d.setAttribute('visibility', 'hidden'));
  };
  svg.addEventListener('mouseleave', hide);
  svg.addEventListener('mousemove', (e) => {
    const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    const px = (e.clientX - r.left) * (vb && vb.width ? vb.width / r.width : 1);
    if (px < left || px > left + width || !all.length) return hide();
    const want = x0 + (px - left) / width * (x1 - x0);
    const ref = all.find((s) => s.ref) || all[0], ri = nearest(ref.steps, want);
    const step = ri >= 0 ? ref.steps[ri] : Math.round(want), refValue = ri >= 0 ? ref.values[ri] : NaN;
    tip.textContent = '';
    const head = document.createElement('div');
    head.style.fontWeight = '600';
    head.textContent = 'step ' + step;
    tip.appendChild(head);
    all.forEach((s, k) => {
      const i = nearest(s.steps, step), line = document.createElement('div');
      const v = i >= 0 ? s.values[i] : NaN, at = i >= 0 ? s.steps[i] : NaN;
      let text = s.name + (s.ref ? ' (reference)' : '') + ': ' + (i >= 0 ? fmt(v) : '\u2013');
      if (i >= 0 && at !== step) text += ' (step ' + at + ')';
      if (!s.ref && at === step && isFinite(v) && isFinite(refValue)) {
        text += '  \u0394 ' + (v - refValue >= 0 ? '+' : '') + fmt(v - refValue);
      }
      line.innerHTML = '<span style="display:inline-block;width:14px;height:3px;vertical-align:middle;' +
          'margin-right:6px;background:' + s.color + '"></span>';
      line.appendChild(document.createTextNode(text));
      tip.appendChild(line);
      const ok = i >= 0 && isFinite(v) && (!log || v > 0);
      dots[k].setAttribute('visibility', ok ? 'visible' : 'hidden');
      if (ok) {
        dots[k].setAttribute('cx', X(at).toFixed(1));
        dots[k].setAttribute('cy', Y(v).toFixed(1));
      }
    });
    const x = X(step).toFixed(1);
    rule.setAttribute('x1', x);
    rule.setAttribute('x2', x);
    rule.setAttribute('y1', top);
    rule.setAttribute('y2', top + height);
    rule.setAttribute('visibility', 'visible');
    tip.hidden = false;
    const hr = host.getBoundingClientRect();
    let tx = e.clientX - hr.left + 14;
    if (tx + tip.offsetWidth > hr.width - 4) tx = e.clientX - hr.left - tip.offsetWidth - 14;
    tip.style.left = Math.max(4, tx) + 'px';
    tip.style.top = (e.clientY - hr.top + 14) + 'px';
  });
}

document.querySelectorAll('svg.lockstep-curve').forEach(attach);
})();
