// The HTML report's style sheet. Colours: error red, warning amber,
// unmatched grey, pass green; rows carry a tint and a left stripe of their
// verdict's colour. A dark scheme follows the system setting.
#include "html_internal.h"

namespace lockstep::internal {

const std::string_view kReportCss = R"CSS(
:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --card: #fff; --ink: #1d2433; --muted: #667085; --line: #e3e6eb;
  --head: #1f2a3d; --head-ink: #e9edf3; --accent: #2f6fde;
  --error: #d92d20; --error-bg: #fdeceb; --warning: #c27803; --warning-bg: #fff5d6;
  --unmatched: #7a8394; --unmatched-bg: #eef0f3; --pass: #12905a; --pass-bg: #fff;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12161d; --card: #1b212b; --ink: #dde3ec; --muted: #8d97a8; --line: #2c3440;
    --head: #0c1016; --head-ink: #dde3ec; --accent: #6ea1ff;
    --error-bg: #3a1d1d; --warning-bg: #362b12; --unmatched-bg: #252b35; --pass-bg: #1b212b;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
code, .mono { font-family: var(--mono); font-size: 12.5px; }
h2 { font-size: 12px; font-weight: 600; letter-spacing: .06em; text-transform: uppercase;
  color: var(--muted); margin: 0 0 8px; display: inline-flex; gap: 6px; align-items: center; }
button, select, input { font: inherit; color: inherit; }
.top { background: var(--head); color: var(--head-ink); padding: 12px 24px;
  display: flex; flex-wrap: wrap; gap: 8px 32px; align-items: center; }
.brand { font-weight: 700; font-size: 17px; letter-spacing: .01em; }
.brand span { font-weight: 400; opacity: .7; }
.runs { display: flex; flex-wrap: wrap; gap: 4px 24px; margin: 0; min-width: 0; }
.runs div { display: flex; gap: 8px; min-width: 0; }
.runs dt { opacity: .6; }
.runs dd { margin: 0; font-family: var(--mono); font-size: 12.5px; word-break: break-all; }
.runs dd.mode { font-family: inherit; font-weight: 600; }
main { padding: 16px 24px 32px; max-width: 1800px; margin: 0 auto; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 14px 16px; margin: 0 0 14px; }
.verdict { margin: 0 0 14px; padding: 10px 16px; border-radius: 8px; font-weight: 600;
  font-family: var(--mono); font-size: 13.5px; border: 1px solid; word-break: break-word; }
.verdict.o-fail { color: var(--error); background: var(--error-bg); border-color: var(--error); }
.verdict.o-warning { color: var(--warning); background: var(--warning-bg); border-color: var(--warning); }
.verdict.o-pass { color: var(--pass); background: var(--card); border-color: var(--pass); }
.overview { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 14px; }
@media (max-width: 900px) { .overview { grid-template-columns: 1fr; } }
.fd.found { border-left: 5px solid var(--error); }
.fd.none { border-left: 5px solid var(--pass); }
.fd-entry { margin: 0 0 6px; font-size: 19px; font-weight: 600; word-break: break-all; }
.fd-entry code { font-size: 18px; }
.fd.none .fd-entry { color: var(--pass); }
.fd-meta { margin: 0 0 6px; display: flex; gap: 6px; flex-wrap: wrap; }
.tag { border: 1px solid var(--line); border-radius: 99px; padding: 0 9px; font-size: 12.5px;
  color: var(--muted); }
.tag.reason { background: var(--error); border-color: var(--error); color: #fff; font-weight: 600; }
.fd-detail { margin: 0 0 8px; font-family: var(--mono); font-size: 12.5px; word-break: break-word; }
.fd-link { color: var(--accent); text-decoration: none; font-weight: 600; word-break: break-all; }
.fd-link:hover { text-decoration: underline; }
.counts {
  display: grid;
  grid-template-columns: minmax(0, 1.3fr) repeat(4, minmax(0, 1fr));
  gap: 8px;
}
.count { border: 1px solid var(--line); background: var(--card); border-radius: 6px;
  padding: 6px 8px; text-align: left; cursor: pointer; border-top: 3px solid var(--line); }
.count:hover { border-color: var(--accent); }
.count b { display: block; font-size: 20px; font-variant-numeric: tabular-nums; }
.count span { color: var(--muted); font-size: 12px; }
.count.v-pass { border-top-color: var(--pass); }
.count.v-warning { border-top-color: var(--warning); }
.count.v-error { border-top-color: var(--error); }
.count.v-unmatched { border-top-color: var(--unmatched); }
.count.active { outline: 2px solid var(--accent); }
.msprobe { margin: 10px 0 0; color: var(--muted); font-size: 12.5px; }
.list summary { cursor: pointer; display: flex; gap: 12px; align-items: baseline; }
.list summary h2 { margin: 0; }
.list ul { margin: 8px 0 0; padding-left: 20px; font-family: var(--mono); font-size: 12.5px; }
.badge { background: var(--line); color: var(--ink); border-radius: 99px; padding: 0 7px;
  font-size: 11.5px; letter-spacing: 0; }
.hint { color: var(--muted); font-size: 12.5px; }
table.mini { border-collapse: collapse; margin-top: 8px; font-size: 13px; }
table.mini th, table.mini td { text-align: left; padding: 3px 14px 3px 0;
  border-bottom: 1px solid var(--line); }
table.mini tr.inserted td:nth-child(2) { color: var(--warning); }
table.mini tr.missing td:nth-child(2) { color: var(--error); }
.card-head { display: flex; gap: 16px; align-items: center; flex-wrap: wrap; margin-bottom: 4px; }
.card-head h2 { margin: 0; }
.ctl { color: var(--muted); font-size: 12.5px; }
.legend { margin-left: auto; color: var(--muted); font-size: 12.5px; display: flex;
  align-items: center; gap: 5px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-left: 8px; }
.legend i.fdl { border-radius: 0; width: 3px; height: 12px; background: var(--error); }
.plot-card { position: relative; }
#plot { display: block; width: 100%; height: 270px; user-select: none; }
#plot text { fill: var(--muted); font-size: 11px; }
#plot .grid { stroke: var(--line); }
#plot .axis { stroke: var(--muted); }
#plot .line { fill: none; stroke: var(--accent); stroke-width: 1; opacity: .4; }
#plot .thr { stroke: var(--warning); stroke-dasharray: 4 3; }
#plot .fdline { stroke: var(--error); stroke-width: 1.5; stroke-dasharray: 5 3; }
#plot text.fdlabel { fill: var(--error); font-weight: 600; }
#plot .sel { stroke: var(--accent); stroke-width: 1.5; }
#plot .hover { stroke: var(--muted); stroke-dasharray: 2 2; }
#plot .empty { font-size: 13px; }
#plot .v-pass, .legend .v-pass, .vb.v-pass { fill: var(--pass); background: var(--pass); }
#plot .v-warning, .legend .v-warning, .vb.v-warning { fill: var(--warning); background: var(--warning); }
#plot .v-error, .legend .v-error, .vb.v-error { fill: var(--error); background: var(--error); }
#plot .v-unmatched, .legend .v-unmatched, .vb.v-unmatched {
  fill: var(--unmatched); background: var(--unmatched); }
#plot circle.v-pass { opacity: .55; }
.tip { position: absolute; pointer-events: none; background: var(--head); color: var(--head-ink);
  padding: 6px 9px; border-radius: 6px; font-size: 12px; max-width: 560px; z-index: 5;
  box-shadow: 0 4px 14px rgba(0,0,0,.25); word-break: break-all; }
.tip b { font-family: var(--mono); font-weight: 600; }
.toolbar { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; margin-bottom: 10px; }
#filter { width: 320px; max-width: 100%; padding: 6px 10px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--card); }
#filter:focus { outline: 2px solid var(--accent); border-color: transparent; }
.toolbar select, .pager button, .ctl select { padding: 5px 8px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--card); cursor: pointer; }
.pager button:disabled { opacity: .4; cursor: default; }
.pager { margin-left: auto; display: flex; gap: 6px; align-items: center; color: var(--muted);
  font-variant-numeric: tabular-nums; }
#row-count, #range { color: var(--ink); font-weight: 600; }
.colpick { position: relative; }
.colpick summary { cursor: pointer; padding: 5px 8px; border: 1px solid var(--line);
  border-radius: 6px; list-style: none; }
.colpick div { position: absolute; z-index: 6; background: var(--card); border: 1px solid var(--line);
  border-radius: 6px; padding: 8px 12px; max-height: 380px; overflow: auto; min-width: 240px;
  box-shadow: 0 6px 18px rgba(0,0,0,.15); }
.colpick label { display: block; white-space: nowrap; font-size: 13px; }
.table-wrap { overflow: auto; max-height: 72vh; border: 1px solid var(--line); border-radius: 6px; }
#table { border-collapse: separate; border-spacing: 0; font-size: 12.5px; min-width: 100%; }
#table th { position: sticky; top: 0; z-index: 3; background: var(--card); text-align: left;
  vertical-align: bottom; padding: 6px 8px; border-bottom: 2px solid var(--line);
  font-weight: 600; font-size: 12px; min-width: 60px; max-width: 120px; cursor: pointer;
  white-space: normal; line-height: 1.25; }
#table th:hover { color: var(--accent); }
#table th.sorted { color: var(--accent); }
#table th.sorted::after { content: " \25B2"; font-size: 10px; }
#table th.sorted.desc::after { content: " \25BC"; }
#table td { padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap;
  background: inherit; }
#table td.num { text-align: right; font-family: var(--mono); font-variant-numeric: tabular-nums; }
#table td.txt { max-width: 26em; overflow: hidden; text-overflow: ellipsis; }
#table td.name { font-family: var(--mono); max-width: 34em; overflow: hidden; text-overflow: ellipsis; }
#table td.long { max-width: 18em; overflow: hidden; text-overflow: ellipsis; color: var(--muted); }
#table td.idx { color: var(--muted); text-align: right; font-variant-numeric: tabular-nums; }
#table .sticky { position: sticky; z-index: 2; }
#table th.sticky { z-index: 4; }
#table .c0 { left: 0; width: 4.5em; min-width: 4.5em; max-width: 4.5em; }
#table .c1 { left: 4.5em; width: 7.5em; min-width: 7.5em; max-width: 7.5em; }
#table .c2 { left: 12em; box-shadow: 1px 0 0 var(--line); }
#table tbody tr { background: var(--pass-bg); cursor: pointer; }
#table tbody tr:hover { filter: brightness(.96); }
#table tr.v-error { background: var(--error-bg); }
#table tr.v-warning { background: var(--warning-bg); }
#table tr.v-unmatched { background: var(--unmatched-bg); }
#table tbody tr td:first-child { border-left: 4px solid transparent; }
#table tr.v-error td:first-child { border-left-color: var(--error); }
#table tr.v-warning td:first-child { border-left-color: var(--warning); }
#table tr.v-unmatched td:first-child { border-left-color: var(--unmatched); }
#table tr.fd td.name { font-weight: 700; }
#table tr.pre-fd { background: var(--pass-bg); }
#table tr.pre-fd td:first-child { border-left-style: dashed; }
#table tr.selected td { box-shadow: inset 0 2px 0 var(--accent), inset 0 -2px 0 var(--accent); }
#table tr.flash td { animation: flash 1.6s ease-out; }
@keyframes flash { 0%, 40% { background: #ffe58a; } 100% { background: inherit; } }
.vb { display: inline-block; min-width: 5.2em; text-align: center; border-radius: 99px;
  padding: 0 6px; color: #fff; font-size: 11.5px; font-weight: 600; }
.vb.v-pass { background: transparent; color: var(--pass); border: 1px solid var(--pass); }
tr.detail { cursor: default; }
tr.detail td { white-space: normal; background: var(--card); padding: 10px 14px; }
.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 3px 16px;
  max-width: 1400px; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; font-family: var(--mono); white-space: pre-wrap; word-break: break-all; }
.foot { margin: 8px 0 0; }
.table-note { margin: 8px 0; padding: 6px 10px; border-left: 4px solid var(--warning);
  background: var(--warning-bg); font-size: 13px; }
.table-note[hidden] { display: none; }
.fd-module { margin: 0 0 6px; font-size: 13px; word-break: break-all; }
.fd-module .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
.fd-module b { font-family: var(--mono); color: var(--error); }
.fd-module span[title] { font-family: var(--mono); }
.fd-module .sep { color: var(--muted); padding: 0 4px; }
.fd-module .cls, .mcls { color: var(--muted); font-size: 12px; border: 1px solid var(--line);
  border-radius: 4px; padding: 0 5px; margin-left: 4px; }
.fd-stack { margin-top: 10px; }
.fd-stack summary { cursor: pointer; font-weight: 600; font-size: 13px; }
.frames { margin: 6px 0 0; padding-left: 4px; font-size: 12.5px; list-style: none; }
.frame.fold summary { cursor: pointer; color: var(--muted); font-size: 12px; padding-left: 9px; }
.frame.fold .frames, .fold .frames { margin: 4px 0 4px 10px; }
.frame { margin: 0 0 5px; padding-left: 6px; border-left: 3px solid transparent; }
.frame .loc { word-break: break-all; }
.frame pre.src { margin: 1px 0 0; font-family: var(--mono); font-size: 12px; white-space: pre-wrap;
  word-break: break-word; }
.frame.user { border-left-color: var(--accent); }
.frame.user .loc { font-weight: 600; }
.frame.user pre.src { color: var(--ink); background: var(--unmatched-bg); padding: 2px 6px;
  border-radius: 4px; }
.frame.lib { color: var(--muted); }
.frame.lib pre.src { color: var(--muted); }
.module-box { max-height: 420px; overflow: auto; border: 1px solid var(--line); border-radius: 6px;
  padding: 6px 8px; }
.mtree, .mtree ul { list-style: none; margin: 0; padding: 0; }
.mtree ul { padding-left: 18px; border-left: 1px dotted var(--line); margin-left: 8px; }
.mrow { display: flex; align-items: center; gap: 8px; padding: 2px 4px; border-radius: 4px;
  min-width: 0; font-size: 13px; }
.mrow:hover { background: var(--unmatched-bg); }
.tw { width: 18px; flex: none; border: 0; background: none; padding: 0; cursor: pointer;
  color: var(--muted); text-align: center; }
.mname { font-family: var(--mono); color: var(--ink); text-decoration: none; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
.mname:hover { text-decoration: underline; color: var(--accent); }
.mtree .vb { min-width: 4.6em; font-size: 11px; flex: none; }
.merr, .mrows { color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums;
  white-space: nowrap; }
.mrows { margin-left: auto; }
.mod.fd-path > .mrow { background: var(--error-bg); }
.mod.fd-node > .mrow { background: var(--error-bg); outline: 2px solid var(--error); }
.mod.fd-node > .mrow .mname { font-weight: 700; color: var(--error); }
.mtree .more { padding: 2px 26px; }
#table td.step { text-align: right; color: var(--muted); font-variant-numeric: tabular-nums; }
#plot .stepline { stroke: var(--muted); stroke-dasharray: 1 3; opacity: .8; }
#plot text.steplabel { font-size: 10.5px; }
#curves { position: relative; }
#curves svg { display: block; max-width: 100%; height: auto; }
#curves svg .bg, #curves svg .legend-box { fill: var(--card); }
#curves svg .legend-box { stroke: var(--line); }
#curves svg text { fill: var(--ink); }
#curves svg .grid { stroke: var(--line); }
#curves svg .frame { stroke: var(--muted); }
.heat { display: grid; grid-template-columns: max-content 1fr; gap: 6px 10px;
  align-items: start; margin-top: 8px; }
.hstep { color: var(--muted); font-size: 12px; }
.heat .cells { display: flex; flex-wrap: wrap; gap: 2px; }
.hc { width: 11px; height: 11px; border-radius: 2px; display: block; opacity: var(--a); }
.hc.v-pass { background: var(--pass); opacity: .25; }
.hc.v-warning { background: var(--warning); }
.hc.v-error { background: var(--error); }
.hc.v-unmatched { background: var(--unmatched); }
.hc.origin { outline: 2px solid var(--ink); outline-offset: 1px; opacity: 1; }
.hc.reached { outline: 1px dotted var(--ink); }
.hops ol { margin: 6px 0 0; padding-left: 22px; font-size: 12.5px; }
)CSS";

}  // namespace lockstep::internal
