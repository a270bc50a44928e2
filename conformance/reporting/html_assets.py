"""The HTML report's one stylesheet and its few lines of script, inlined in the page.

The script only helps: it shows the filters (hidden without it), hides rule entries by verdict
and area, opens the entry or exchange a link points at, and opens every rule entry before
printing. Without it every entry is still there, failures open, the rest one click away.
"""

from __future__ import annotations

from .charts import CHART_STYLE

STYLE = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:.8em 1.2em;max-width:90em;
color:#222;background:#fff}
h1{font-size:1.25em;margin:.1em 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
h3{font-size:1em;margin:1em 0 .3em}h4{font-size:.95em;margin:.8em 0 .2em}
a{color:#1b4f8a}
table{border-collapse:collapse}td,th{padding:.15em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}
pre{background:#f6f6f6;border:1px solid #e4e4e4;padding:.4em .6em;white-space:pre-wrap;
word-break:break-all;margin:.2em 0;font-size:12.5px}
code{font-size:12.5px;word-break:break-all}
.note{color:#666;font-size:.9em;margin:.2em 0}
.warning{border:2px solid #c62828;padding:.3em .6em;font-weight:600}
.glance{display:flex;flex-wrap:wrap;gap:0 3em;align-items:flex-start}
.glance>section{min-width:0}.latency svg{margin-bottom:.3em}
.badge{display:inline-block;padding:.05em .5em;border-radius:3px;font-weight:600;
font-size:.85em;color:#fff}
.result{font-size:1.6em;padding:.05em .5em;margin-right:.4em;vertical-align:middle}
table.meta th{color:#555;font-weight:normal;padding-left:0;white-space:nowrap}
table.meta td,table.meta th{padding-top:0;padding-bottom:0}
.PASS,.PASSED{background:#2e7d32}.FAIL,.FAILED{background:#c62828}
.NON_STRICT{background:#d17b00}.SKIP{background:#9e9e9e}.ERROR{background:#6a1b9a}
table.grid th{font-weight:600;font-size:.85em;padding:1px .6em 1px 0;white-space:nowrap;
vertical-align:middle}
table.grid td{padding:1px 0}
a.cell{display:inline-block;width:2.6em;margin:1px;text-align:center;color:#fff;
font-size:.78em;line-height:1.6;text-decoration:none;border-radius:2px}
a.cell.SKIP{color:#222;background:#d6d6d6}a.cell:hover,a.cell:focus{outline:2px solid #111}
.legend{margin-left:1em;font-weight:normal}.legend span{margin-right:.5em;font-size:.8em}
#filters{margin:.4em 0;font-size:.9em}#filters label{margin-right:.7em}
details.rule{border:1px solid #ddd;border-left:6px solid #9e9e9e;margin:.35em 0;
padding:.2em .8em}
details.rule>summary{cursor:pointer;padding:.15em 0}
details.rule.PASS,details.rule.FAIL,details.rule.NON_STRICT,details.rule.SKIP,
details.rule.ERROR{background:#fff}
details.rule.PASS{border-left-color:#2e7d32}details.rule.FAIL{border-left-color:#c62828}
details.rule.NON_STRICT{border-left-color:#d17b00}details.rule.ERROR{border-left-color:#6a1b9a}
details.rule:target,details.exchange:target{box-shadow:0 0 0 3px #ffd54f}
dl.fields{margin:.3em 0;display:grid;grid-template-columns:max-content 1fr;gap:.1em .8em}
dl.fields dt{color:#555}dl.fields dd{margin:0;min-width:0;overflow-wrap:anywhere}
.finding{border-top:1px solid #eee;margin-top:.4em;padding-top:.3em}
details.exchange{margin:.25em 0;padding:.1em .5em;border:1px solid #e4e4e4;background:#fcfcfc}
details.exchange>summary{cursor:pointer;font-family:ui-monospace,monospace;font-size:12.5px}
table.events td,table.events th{border-bottom:1px solid #eee;font-size:12.5px}
ul.judged{margin:.2em 0;padding-left:1.2em}
@media print{#filters{display:none}body{max-width:none;padding:0}a{color:inherit}
a.cell,.badge,.result{-webkit-print-color-adjust:exact;print-color-adjust:exact}
details.rule{break-inside:avoid}}
""" + CHART_STYLE

SCRIPT = """
(function(){
var f=document.getElementById('filters');if(!f)return;f.hidden=false;
function apply(){var on={};f.querySelectorAll('input[name=verdict]').forEach(function(c){
on[c.value]=c.checked});var area=f.elements.area.value;
document.querySelectorAll('section.rules').forEach(function(s){var any=false;
s.querySelectorAll('details.rule').forEach(function(e){
var show=on[e.dataset.verdict]&&(!area||e.dataset.area===area);e.hidden=!show;any=any||show});
s.hidden=!any});}
function reveal(){var id=decodeURIComponent(location.hash.slice(1));
var e=id&&document.getElementById(id);if(!e)return;
for(var d=e;d;d=d.parentElement){if(d.hidden)d.hidden=false;if(d.tagName==='DETAILS')d.open=true}
e.scrollIntoView();}
f.addEventListener('change',apply);window.addEventListener('hashchange',reveal);reveal();
window.addEventListener('beforeprint',function(){
document.querySelectorAll('details.rule').forEach(function(d){d.open=true})});
})();
"""
