"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const n = document.createElement(tag);
  if (text !== undefined) n.textContent = String(text); if (cls) n.className = cls; return n; };
let cost = 0, timer = null, place = "";

async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  return r.json().catch(() => ({ok: false}));
}

function gist(p) {
  if (!p || typeof p !== "object") return "";
  return Object.entries(p).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
    .map(([k, v]) => k + "=" + (typeof v === "object" ? JSON.stringify(v) : String(v)))
    .join(", ").replace(/\s+/g, " ").slice(0, 300);
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

// One row per step label (干活, 干活·判定#1, 干活#round2…): running, then ok / failed and its cost.
function stepRow(label, state, spent) {
  if (!label) return;
  const id = "step-" + encodeURIComponent(label);
  let row = document.getElementById(id);
  if (!row) { row = el("tr"); row.id = id; row.append(el("td", label), el("td"), el("td"));
    $("steps").append(row); }
  row.children[1].textContent = state; row.children[1].className = state === "failed" ? "unreachable" : "";
  if (spent !== undefined) row.children[2].textContent = "$" + (Number(spent) || 0).toFixed(4);
}

function tick(until, label) {
  clearInterval(timer);
  const show = () => { const left = Math.max(0, Math.round((until - Date.now()) / 1000));
    $("countdown").textContent = left ? label + " " + left + "s" : ""; if (!left) clearInterval(timer); };
  show(); timer = setInterval(show, 1000);
}

const on = {
  step: (e) => { place = " (step " + e.payload.index + "/" + e.payload.total + ")";
    $("step").textContent = e.step + place; },
  prompt: (e) => { if (e.step && !e.step.includes("·")) $("step").textContent = e.step + place;
    stepRow(e.step, "running"); },
  verdict: (e) => { const v = $("verdict"); v.textContent = ""; v.className = e.payload.state || "";
    v.append(el("div", "round " + e.payload.round + "/" + e.payload.rounds + ": " + (e.payload.state || "unclear")),
             el("div", e.payload.reason || ""));
    (e.payload.failed || []).forEach((c) => v.append(el("div", "- " + c))); },
  result: (e) => { cost += Number(e.payload.cost_usd) || 0; $("cost").textContent = "$" + cost.toFixed(4);
    stepRow(e.step, e.payload.ok ? "ok" : "failed", e.payload.cost_usd); },
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
