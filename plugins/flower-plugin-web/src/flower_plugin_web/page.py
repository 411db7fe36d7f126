"""The page: one server-rendered HTML document with a little JavaScript, no build step.

Text that came from the model, the tools or the files is never executed: the server
escapes everything it puts in the HTML (Markdown is rendered with raw HTML off), and the
script only ever assigns ``textContent``.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from flower_plugin_web.hub import Hub

#: Raw HTML in a document is shown as text, never rendered.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    """A document as safe HTML."""
    return _MARKDOWN.render(text)


def page_html(hub: Hub) -> str:
    where = hub.where
    workspace = html.escape(str(where.workspace)) if where else "(no run yet)"
    return PAGE.replace("{{workspace}}", workspace)


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flower · {{workspace}}</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f4; }
  header { background: #23302b; color: #f4f4f0; padding: 10px 16px; display: flex; gap: 18px;
           flex-wrap: wrap; align-items: baseline; }
  header b { font-size: 16px; }
  main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 14px;
         padding: 14px; }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
  section { background: #fff; border-radius: 8px; padding: 10px 14px;
            box-shadow: 0 1px 2px rgba(0,0,0,.08); margin-bottom: 14px; }
  h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; color: #5b6b63;
       margin: 0 0 8px; }
  #stream { font: 12px/1.4 ui-monospace, monospace; max-height: 60vh; overflow: auto;
            white-space: pre-wrap; word-break: break-word; }
  #stream div { border-bottom: 1px solid #f0f0ee; padding: 2px 0; }
  .kind { color: #6b5b95; } .dim { color: #888; }
  .ask { border-left: 3px solid #c98b2b; padding: 4px 8px; margin: 6px 0; }
  .ask button, form button { margin: 4px 6px 0 0; }
  .bar { height: 6px; background: #e3e3de; border-radius: 3px; overflow: hidden; }
  .bar i { display: block; height: 100%; background: #4b8b6b; width: 0; }
  .bar.hot i { background: #c0563b; }
  input[type=text] { width: 70%; padding: 4px; }
  #doc { max-height: 50vh; overflow: auto; }
  table { border-collapse: collapse; font-size: 12px; } td, th { padding: 2px 6px; text-align: left; }
  .achieved { color: #2f7a4f; } .not_yet { color: #a06b12; } .unreachable { color: #b3361d; }
</style>
</head>
<body>
<header>
  <b>flower</b><span>{{workspace}}</span>
  <span id="step">waiting for the run</span>
  <span id="cost">$0.0000</span>
  <span id="countdown"></span>
  <span id="link" class="dim">connecting</span>
</header>
<main>
  <div>
    <section><h2>Questions</h2><div id="asks"><p class="dim" id="noasks">none waiting</p></div></section>
    <section><h2>Events</h2><div id="stream"></div></section>
  </div>
  <div>
    <section><h2>Verdict</h2><div id="verdict" class="dim">no ruling yet</div></section>
    <section><h2>Context</h2>
      <div class="bar" id="ctxbar"><i></i></div><div id="ctx" class="dim">-</div></section>
    <section><h2>Tell the agents</h2>
      <form id="inbox"><input type="text" name="text" placeholder="a remark for the inbox (added to the brief)">
        <button>send</button></form>
      <form id="aside"><input type="text" name="question" placeholder="a side question: where are we?">
        <button>ask</button></form>
      <div id="asides"></div></section>
    <section><h2>Documents</h2>
      <button data-doc="brief">brief</button><button data-doc="goal">goal</button>
      <button data-doc="handoff">handoff</button><button data-doc="ledger">verdicts</button>
      <button id="runs">past steps</button>
      <div id="doc"></div></section>
  </div>
</main>
<script src="/page.js"></script>
</body>
</html>
"""

SCRIPT = r""""use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const n = document.createElement(tag);
  if (text !== undefined) n.textContent = String(text); if (cls) n.className = cls; return n; };
let cost = 0, timer = null;

async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  return r.json().catch(() => ({ok: false}));
}

function gist(p) {
  if (!p || typeof p !== "object") return "";
  return Object.entries(p).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
    .map(([k, v]) => k + "=" + (typeof v === "object" ? JSON.stringify(v) : String(v)))
    .join(", ").slice(0, 400);
}

function line(e) {
  const d = el("div"); d.id = "e" + e.id;
  d.append(el("span", "[" + e.kind + "] ", "kind"), el("span", (e.step ? e.step + ": " : "") + gist(e.payload)));
  const s = $("stream"); const stick = s.scrollTop + s.clientHeight >= s.scrollHeight - 4;
  s.append(d); while (s.childElementCount > 2000) s.firstChild.remove();
  if (stick) s.scrollTop = s.scrollHeight;
}

function showAsk(p) {
  const old = $("ask-" + p.id); if (old) old.remove();
  if (p.state !== "asked") { if (!$("asks").querySelector(".ask")) $("noasks").hidden = false; return; }
  $("noasks").hidden = true;
  const box = el("div", undefined, "ask"); box.id = "ask-" + p.id;
  box.append(el("div", p.question));
  (p.options || []).forEach((o, i) => { const b = el("button", (i + 1) + ") " + o);
    b.dataset.answer = o; b.onclick = () => post("/answer", {id: p.id, answer: o}); box.append(b); });
  const f = el("form"); const t = el("input"); t.type = "text"; t.name = "answer";
  t.placeholder = "or type an answer";
  f.append(t, el("button", "answer")); f.onsubmit = (ev) => { ev.preventDefault();
    if (t.value.trim()) post("/answer", {id: p.id, answer: t.value}); };
  const skip = el("button", "skip (let the agent decide)"); skip.onclick = () => post("/answer", {id: p.id, decline: true});
  box.append(f, skip); $("asks").append(box);
}

function tick(until, label) {
  clearInterval(timer);
  const show = () => { const left = Math.max(0, Math.round((until - Date.now()) / 1000));
    $("countdown").textContent = left ? label + " " + left + "s" : ""; if (!left) clearInterval(timer); };
  show(); timer = setInterval(show, 1000);
}

const on = {
  step: (e) => { $("step").textContent = e.step + " (" + e.payload.index + "/" + e.payload.total + ")"; },
  verdict: (e) => { const v = $("verdict"); v.textContent = ""; v.className = e.payload.state || "";
    v.append(el("div", "round " + e.payload.round + "/" + e.payload.rounds + ": " + (e.payload.state || "unclear")),
             el("div", e.payload.reason || ""));
    (e.payload.failed || []).forEach((c) => v.append(el("div", "- " + c))); },
  result: (e) => { cost += Number(e.payload.cost_usd) || 0; $("cost").textContent = "$" + cost.toFixed(4); },
  context: (e) => { const p = e.payload, at = Number(p.at) || Number(p.window) || 1;
    const share = Math.min(1, (Number(p.used) || 0) / at);
    $("ctxbar").firstChild.style.width = (share * 100).toFixed(1) + "%";
    $("ctxbar").classList.toggle("hot", share > 0.85);
    $("ctx").textContent = (p.used || 0) + " of " + at + " tokens before a handoff (window " + p.window + ")"; },
  retry: (e) => tick(Date.now() + 1000 * (Number(e.payload.delay) || 0), "retry in"),
  offline: (e) => tick(Date.now() + 1000 * (Number(e.payload.next_probe_in) || 0), "offline, next probe in"),
  ask: (e) => showAsk(e.payload),
  aside: (e) => { if (e.payload.answer === null) return; const a = el("div");
    a.append(el("div", "? " + e.payload.question, "dim"), el("div", e.payload.answer)); $("asides").append(a); },
};

function connect() {
  const src = new EventSource("/events");
  src.addEventListener("flower", (m) => { const e = JSON.parse(m.data);
    if ($("e" + e.id)) return; line(e); if (on[e.kind]) on[e.kind](e); });
  src.onopen = () => { $("link").textContent = "live"; };
  src.onerror = () => { $("link").textContent = "reconnecting"; };
}

$("inbox").onsubmit = async (ev) => { ev.preventDefault(); const t = ev.target.text;
  if (t.value.trim()) { const r = await post("/inbox", {text: t.value}); if (r.ok) t.value = ""; } };
$("aside").onsubmit = async (ev) => { ev.preventDefault(); const q = ev.target.question;
  if (q.value.trim()) { const r = await post("/aside", {question: q.value}); if (r.ok) q.value = ""; } };
document.querySelectorAll("[data-doc]").forEach((b) => b.onclick = async () => {
  const r = await fetch("/doc/" + b.dataset.doc); $("doc").innerHTML = await r.text(); });
$("runs").onclick = async () => { const rows = await (await fetch("/runs")).json();
  const t = el("table"); t.append(el("tr"));
  ["step", "ok", "cost", "run"].forEach((h) => t.firstChild.append(el("th", h)));
  rows.forEach((r) => { const tr = el("tr"); [r.step, r.ok ? "ok" : "x", "$" + (Number(r.cost_usd) || 0).toFixed(4),
    String(r.run || "").slice(0, 15)].forEach((v) => tr.append(el("td", v))); t.append(tr); });
  $("doc").textContent = ""; $("doc").append(t); };
connect();
"""
