"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const n = document.createElement(tag);
  if (text !== undefined) n.textContent = String(text); if (cls) n.className = cls; return n; };
let timer = null, segment = "", lastId = "", shown = false;
// The header: the workflow's step (a step event), its round (a prompt of that step), and a
// judge running for it as a sub-label; a side question's own session never shows there.
let place = "", current = "", sub = "";
// What this run cost, as the terminal's closing line counts it: its steps, and the side
// questions (wherever asked; their own session's result is counted as its aside event).
let steps = 0, side = 0, sides = 0;
let over = null;  // the "ended" event's payload: the run is over, the stream is not followed again
const ASIDE = "旁路问答";

// The token comes once, in the URL's fragment (never sent to any server), and is kept for
// this tab only (sessionStorage: a reload keeps it; no other tab or page reads or replaces
// it). A token from the address replaces the tab's only once the server has taken it; the
// tab forgets it once the server says it is not this run's, or the run's server is gone.
// It goes out as a header, which no other site can make the browser send.
const KEY = "flower-token";
localStorage.removeItem(KEY);  // where older pages kept it, for the whole origin, for good
let token = sessionStorage.getItem(KEY) || "";
function fromAddress() {
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!found) return "";
  history.replaceState(null, "", location.pathname + location.search);  // out of the address bar and the tab's history
  try { return decodeURIComponent(found[1]); } catch (e) { return ""; }
}
function forget() { sessionStorage.removeItem(KEY); token = ""; }
// Whether the server takes a token: only then does it become the tab's.
async function adopt(offered) {
  if (!offered || offered === token) return true;
  let r;
  try { r = await fetch("/state", {cache: "no-store", headers: {"X-Flower-Token": offered}}); } catch (e) {
    notice(UNREACHABLE + "/state (is the run still going?)"); return false; }
  if (r.status === 200) { token = offered; sessionStorage.setItem(KEY, token); return true; }
  notice("the token in the address does not open the run on this port (an older run's?): "
    + (token ? "this page keeps its own" : "open the URL flower web printed"));
  return false;
}
// No service worker may stand between the page and its server: one that someone else
// registered on this origin sees every request, the token's header included. Any found
// is removed; while one controls this page, the page sends nothing.
async function noWorkers() {
  const sw = navigator.serviceWorker;  // absent off loopback over plain HTTP
  if (!sw) return true;
  const found = await sw.getRegistrations().catch(() => []);
  await Promise.all(found.map((r) => r.unregister()));
  if (!sw.controller) return true;
  notice("a service worker that is not flower's served this page (removed now): it saw the token;"
    + " stop the run (Ctrl-C) and start it again without --host/--port");
  $("link").textContent = "locked";
  return false;
}
// A new URL pasted into this tab only changes the fragment: its token, once taken, starts
// over. A page a service worker served loads afresh instead (the worker is gone by then).
window.addEventListener("hashchange", async () => {
  if (navigator.serviceWorker && navigator.serviceWorker.controller) { location.reload(); return; }
  const offered = fromAddress();
  if (offered && offered !== token && await adopt(offered)) location.reload(); });
const pageId = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// Every refusal is one line here, never swallowed.
const UNREACHABLE = "the page's server did not answer ";
function notice(text) { const n = $("notice"); n.textContent = text; n.hidden = false; }
$("notice").onclick = () => { $("notice").hidden = true; };
let refused = false;  // the server said this tab's token is not its run's (then forgotten)
function locked() {
  refused = refused || Boolean(token);
  notice(refused ? "this page's token does not open the run on this port (a newer run?): open the URL flower web printed"
                 : "this page needs its token: open the URL flower web printed (…/#token=…)");
  $("link").textContent = "locked"; forget();  // not this run's: kept nowhere
}

async function call(path, init) {
  init = Object.assign({cache: "no-store"}, init || {});
  init.headers = Object.assign({"X-Flower-Token": token, "X-Flower-Page": pageId}, init.headers || {});
  let r;
  try { r = await fetch(path, init); } catch (e) {
    notice(UNREACHABLE + path + " (is the run still going?)"); return null; }
  if (r.status === 401) locked();
  return r;
}

async function post(path, body) {
  const r = await call(path, {method: "POST", headers: {"Content-Type": "application/json"},
                              body: JSON.stringify(body)});
  if (!r) return {ok: false};
  const d = await r.json().catch(() => ({}));
  if (!r.ok || d.ok !== true) {
    if (r.status !== 401) notice(d.error || (path + " was refused (HTTP " + r.status + ")"));
    return Object.assign({}, d, {ok: false});
  }
  return d;
}

// An event as the terminal shows it: the server sends the terminal's own lines (flower's run
// view, words.py), each with the terminal's style; the raw payload goes underneath, shown
// with "raw" ticked, as are the events the terminal leaves out (prompts, context levels...).
function line(e) {
  const d = el("div"); d.id = "e" + e.id;
  const lines = Array.isArray(e.lines) ? e.lines : [];
  if (!lines.length) d.className = "quiet";
  if (e.step === ASIDE) d.classList.add("side");
  lines.forEach((l) => { const row = el("div", l[0], String(l[1] || "").split(/\s+/).filter(Boolean)
    .map((w) => "s-" + w).join(" ")); if (Number(l[2]) > 0) row.style.paddingLeft = Number(l[2]) + "ch"; d.append(row); });
  const raw = el("div", undefined, "raw");
  raw.append(el("span", "[" + e.kind + "] ", "kind"), el("span", (e.step ? label(e.step) + " " : "") + JSON.stringify(e.payload)));
  d.append(raw);
  const s = $("stream"); const stick = s.scrollTop + s.clientHeight >= s.scrollHeight - 4;
  s.append(d); while (s.childElementCount > 2000) s.firstChild.remove();
  if (stick) s.scrollTop = s.scrollHeight;
}

// A question's words and options with what does not show made visible, as ⟨U+202E⟩:
// bidi controls (U+202E turns "yes" into what reads "sey"), zero-width and other
// invisible characters; in an option also spaces other than U+0020, and spaces at either
// end (␣), so two options that differ always look different. The answer sent is the
// option as it was.
const HIDDEN = /[\p{Cf}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;
const SPACES = /(?! )\p{Zs}/gu;
const codepoint = (c) => "\u27E8U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "\u27E9";
const visible = (text) => String(text).replace(HIDDEN, codepoint);
const option = (text) => visible(text).replace(SPACES, codepoint)
  .replace(/^ +| +$/g, (spaces) => "\u2423".repeat(spaces.length));

function showAsk(p) {
  const old = $("ask-" + p.id);
  if (old && p.state === "asked") return;  // shown already: keep what is being typed in it
  if (old) old.remove();
  if (p.state !== "asked") { if (!$("asks").querySelector(".ask")) $("noasks").hidden = false; return; }
  $("noasks").hidden = true;
  const box = el("div", undefined, "ask"); box.id = "ask-" + p.id;
  if (p.stale) box.append(el("div", "asked before the run stopped" + (p.step ? " (" + label(p.step) + ")" : "")
    + ": the answer goes to the step that asked when it runs again", "dim"));
  box.append(el("div", visible(p.question)));
  (p.options || []).forEach((o, i) => { const b = el("button", (i + 1) + ") " + option(o));
    b.dataset.answer = o; b.onclick = () => post("/answer", {id: p.id, answer: o}); box.append(b); });
  const f = el("form"); const t = el("input"); t.type = "text"; t.name = "answer";
  t.placeholder = "or type an answer (? … asks on the side)";
  f.append(t, el("button", "answer")); f.onsubmit = (ev) => { ev.preventDefault();
    if (asideIn(t)) return;  // "? …" is a side question, never the answer
    if (t.value.trim()) post("/answer", {id: p.id, answer: t.value}); };
  const skip = el("button", "skip (let the agent decide)"); skip.onclick = () => post("/answer", {id: p.id, decline: true});
  box.append(f, skip); $("asks").append(box);
}

// Step names are keys and stay the seed's Chinese in every language; the page, whose own
// words are English, shows each with its English gloss, as flower.core.lang.step_label does
// for an English run's terminal: 干活·判定#1 (work · judge #1).
const GLOSS = {"确认需求": "clarify", "设定目标": "set the goal", "干活": "work", "判定": "judge",
               "收尾": "bequest", "旁路问答": "side question"};
function gloss(name) {
  if (GLOSS[name]) return GLOSS[name];
  let m = /#(round|retry)(\d+)$/.exec(name);
  if (m) { const base = gloss(name.slice(0, m.index)); return base ? base + ", " + m[1] + " " + m[2] : ""; }
  m = /^(.+)·判定(?:#(\d+))?$/.exec(name);
  if (m) { const base = gloss(m[1]); return base ? base + " · judge" + (m[2] ? " #" + m[2] : "") : ""; }
  return "";
}
const label = (name) => { const g = name ? gloss(name) : ""; return g ? name + " (" + g + ")" : (name || ""); };

// One row per step label (干活, 干活·判定#1, 干活#round2…): running, then ok / failed and its cost.
function stepRow(step, state, spent) {
  if (!step || step === ASIDE) return;  // a side question is not a step of the run
  const id = "step-" + encodeURIComponent(step);
  let row = document.getElementById(id);
  if (!row) { row = el("tr"); row.id = id; row.append(el("td", label(step)), el("td"), el("td"));
    $("steps").append(row); }
  row.children[1].textContent = state; row.children[1].className = state === "failed" ? "unreachable" : "";
  if (spent !== undefined) row.children[2].textContent = usd(spent);
}

function tick(until, label) {
  clearInterval(timer);
  const show = () => { const left = Math.max(0, Math.round((until - Date.now()) / 1000));
    $("countdown").textContent = left ? label + " " + left + "s" : ""; if (!left) clearInterval(timer); };
  show(); timer = setInterval(show, 1000);
}

function header() {
  $("step").textContent = current ? label(current) + place : "waiting for the run";
  $("sub").textContent = sub ? " · " + label(sub) : "";
}

// Every dollar figure; "simulated" beside each when the costs are (flower demo --web).
let simulated = false;
const usd = (n) => "$" + (Number(n) || 0).toFixed(4) + (simulated ? " simulated" : "");
function showCost() {
  $("cost").textContent = over ? over.total : usd(steps + side) + (sides ? " (side questions " + usd(side) + ")" : "");
}

// Side questions, wherever asked (the terminal's come too): the question at once, its
// answer and cost when they come.
const asking = new Map();
function showAside(p) {
  const key = (p.via || "") + "\n" + p.question;
  let box = asking.get(key);
  if (!box) { box = el("div"); box.append(el("div", "? " + (p.via ? "" : "(terminal) ") + p.question, "dim"),
    el("div", "asking…", "dim")); $("asides").append(box); }
  if (p.answer === null || p.answer === undefined) { asking.set(key, box); return; }
  asking.delete(key);
  box.lastChild.textContent = p.answer; box.lastChild.className = p.ok === false ? "s-yellow" : "";
  box.append(el("div", usd(p.cost_usd), "dim"));
}

// The run is over (the last event, "ended"): how it ended and the terminal's closing
// lines; the page stops following the stream once the server ends it, and says so.
function showEnded(p) {
  over = p; clearInterval(timer); $("countdown").textContent = "";
  const box = $("ended"); box.textContent = ""; box.hidden = false;
  box.className = p.state === "done" || (p.code === 0 && !p.state) ? "" : "failed";
  const said = String(p.said || "the run ended");
  box.append(el("b", said.charAt(0).toUpperCase() + said.slice(1)));
  (p.lines || []).forEach((l) => box.append(el("div", l[0])));
  if (!(p.lines || []).length) box.append(el("div", p.total));
  const until = new Date(((Number(p.at) || Date.now() / 1000) + (Number(p.stays) || 0)) * 1000);
  box.append(el("p", Number(p.stays) > 0
    ? "This page's server stays up until " + until.toLocaleTimeString() + " (or until it is ended in the terminal); what is shown here stays."
    : "This page's server stops with the run; what is shown here stays.", "dim"));
  asking.forEach((a) => { a.lastChild.textContent = "not answered: the run ended"; }); asking.clear();
  document.querySelectorAll("#inbox input, #inbox button, #aside input, #aside button").forEach((n) => { n.disabled = true; });
  $("link").textContent = "run over"; showCost();
}

// The run's checkpoints, as `flower rewind` lists them (the /state route's, from
// flower.core.going_back.listing): the round or step each begins, its time, the judge's
// word on that round, how many files differ from the newest. Going back is done in the
// terminal (`flower rewind N`): the page changes no file. Asked again after every step,
// prompt and verdict (a checkpoint is taken just before a step or round is sent), once
// things have settled.
function showCheckpoints(c) {
  const box = $("checkpoints"); box.textContent = "";
  if (!c) { box.className = "dim"; box.textContent = "none yet: one is taken before every step and round"; return; }
  if (c.error) { box.className = "unreachable"; box.textContent = c.error; return; }
  box.className = "";
  const t = el("table"), head = el("tr");
  ["#", "checkpoint", "time", "judge", "differ from now"].forEach((h) => head.append(el("th", h)));
  t.append(head);
  (c.rows || []).forEach((r) => { const tr = el("tr"); tr.id = "checkpoint-" + r.n;
    const when = new Date((Number(r.at) || 0) * 1000).toLocaleTimeString();
    [String(r.n), label(r.title), when, r.judge || "", r.differ ? r.differ + " file(s)" : ""]
      .forEach((v) => tr.append(el("td", v)));
    if (r.judge) tr.children[3].className = r.judge;
    t.append(tr); });
  box.append(t, el("div", "flower rewind N in the run's folder goes back to the start of round N", "dim"));
}
let checkpointTimer = null;
function checkpointsLater() {
  clearTimeout(checkpointTimer);
  checkpointTimer = setTimeout(async () => { const r = await call("/state");
    if (r && r.ok) showCheckpoints((await r.json()).checkpoints); }, 1500);
}

const on = {
  step: (e) => { place = " (step " + e.payload.index + "/" + e.payload.total + ")";
    current = e.step || ""; sub = ""; header(); checkpointsLater(); },
  prompt: (e) => { if (!e.step || e.step === ASIDE) return;
    if (e.step.includes("·")) sub = e.step; else { current = e.step; sub = ""; }
    header(); stepRow(e.step, "running"); checkpointsLater(); },
  verdict: (e) => { const v = $("verdict"); v.textContent = ""; v.className = e.payload.state || "";
    v.append(el("div", "round " + e.payload.round + "/" + e.payload.rounds + ": " + (e.payload.state || "unclear")),
             el("div", e.payload.reason || ""));
    (e.payload.failed || []).forEach((c) => v.append(el("div", "- " + c))); checkpointsLater(); },
  result: (e) => { if (e.step === ASIDE) return;  // counted as its aside event
    steps += Number(e.payload.cost_usd) || 0; showCost();
    if (e.step === sub) { sub = ""; header(); }
    stepRow(e.step, e.payload.ok ? "ok" : "failed", e.payload.cost_usd); },
  context: (e) => { if (e.step === ASIDE) return;  // the side question's own context, not the run's
    const p = e.payload, at = Number(p.at) || Number(p.window) || 1;
    const share = Math.min(1, (Number(p.used) || 0) / at);
    $("ctxbar").firstChild.style.width = (share * 100).toFixed(1) + "%";
    $("ctxbar").classList.toggle("hot", share > 0.85);
    $("ctx").textContent = (p.used || 0) + " of " + at + " tokens before a handoff (window " + p.window + ")"; },
  retry: (e) => tick(Date.now() + 1000 * (Number(e.payload.delay) || 0), "retry in"),
  offline: (e) => tick(Date.now() + 1000 * (Number(e.payload.next_probe_in) || 0), "offline, next probe in"),
  ask: (e) => showAsk(e.payload),
  budget: (e) => { const p = e.payload, spent = Number(p.spent) || 0, b = $("budget");
    b.textContent = p.cap == null ? "run " + usd(spent)
      : "budget " + usd(spent) + " of $" + Number(p.cap).toFixed(2)
        + (p.phase === "reached" ? ": spent, the run stops" : "");
    b.classList.toggle("hot", p.phase === "near" || p.phase === "reached"); },
  aside: (e) => { if (e.payload.answer !== null && e.payload.answer !== undefined) {
      sides += 1; side += Number(e.payload.cost_usd) || 0; showCost(); }
    showAside(e.payload); },
  ended: (e) => showEnded(Object.assign({at: e.at}, e.payload)),
};

function clearViews() {
  $("stream").textContent = ""; $("steps").textContent = ""; $("asides").textContent = "";
  $("asks").querySelectorAll(".ask").forEach((n) => n.remove()); $("noasks").hidden = false;
  asking.clear(); steps = 0; side = 0; sides = 0; showCost();
}

function hello(d) {
  if (segment && d.segment !== segment) { location.reload(); return; }  // another run: start over
  segment = d.segment;
  if (d.reset && shown) clearViews();  // what follows is a fresh copy, not the rest of ours
}

function message(block) {
  let kind = "message", data = "", id = "";
  for (const raw of block.split("\n")) {
    if (!raw || raw.startsWith(":")) continue;
    const at = raw.indexOf(":"), field = at < 0 ? raw : raw.slice(0, at);
    let value = at < 0 ? "" : raw.slice(at + 1); if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") kind = value; else if (field === "id") id = value;
    else if (field === "data") data += (data ? "\n" : "") + value;
  }
  if (kind === "run") { hello(JSON.parse(data)); return; }
  if (kind !== "flower") return;
  const e = JSON.parse(data); lastId = id || e.id; shown = true;
  if ($("e" + e.id)) return;
  line(e); if (on[e.kind]) on[e.kind](e);
}

// Server-sent events read with fetch (EventSource cannot send the token's header);
// reconnects with Last-Event-ID, as EventSource would.
async function follow() {
  while (!over) {
    const r = await call("/events", {headers: lastId ? {"Last-Event-ID": lastId} : {}});
    if (r && r.status === 401) return;
    if (r && r.ok && r.body) {
      $("link").textContent = "live";
      if ($("notice").textContent.startsWith(UNREACHABLE)) $("notice").hidden = true;  // back
      try {
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const {value, done} = await reader.read(); if (done) break;
          buf += value; let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) { message(buf.slice(0, cut)); buf = buf.slice(cut + 2); }
        }
      } catch (e) { /* the connection dropped: reconnect below */ }
      if (over) { serverGone(); return; }  // the run is over and its server ended the stream
    } else if (r) {
      const d = await r.json().catch(() => ({}));
      notice(d.error || "the live stream was refused (HTTP " + r.status + ")");
    }
    $("link").textContent = "reconnecting";
    await sleep(r && r.status === 503 ? 10000 : 2000);
  }
}

function serverGone() {
  $("link").textContent = "server stopped"; forget();  // the run is over: its token opens nothing more
  const note = $("ended").querySelector("p");
  if (note) note.textContent = "This page's server stopped at " + new Date().toLocaleTimeString()
    + "; what is shown here stays (a reload would find nothing).";
}

async function start() {
  const r = await call("/state");
  if (!r || !r.ok) return;
  const s = await r.json();
  segment = s.segment; simulated = s.simulated === true; showCost();
  if (s.workspace) { $("workspace").textContent = s.workspace; document.title = "flower · " + s.workspace; }
  s.pending.forEach(showAsk); showCheckpoints(s.checkpoints);
  follow();
}

$("raw").onchange = () => $("stream").classList.toggle("raw-on", $("raw").checked);
// A line that starts with "?" (or the full-width "？") is a side question wherever it is
// typed, as in the terminal: never an inbox line, never an answer.
// Returns whether the line was one (then it is asked, and the box emptied once sent).
function asideIn(input) {
  const found = /^\s*[?？]\s*([\s\S]*)$/.exec(input.value);
  if (!found) return false;
  const question = found[1].trim();
  if (!question) { notice("ask something after the ?"); return true; }
  post("/aside", {question}).then((r) => { if (r.ok) input.value = ""; });
  return true;
}
$("inbox").onsubmit = async (ev) => { ev.preventDefault(); const t = ev.target.text;
  if (asideIn(t)) return;
  if (t.value.trim()) { const r = await post("/inbox", {text: t.value}); if (r.ok) t.value = ""; } };
$("aside").onsubmit = async (ev) => { ev.preventDefault(); const q = ev.target.question;
  if (asideIn(q)) return;  // "? where are we" here too: the ? is not part of the question
  if (q.value.trim()) { const r = await post("/aside", {question: q.value}); if (r.ok) q.value = ""; } };
// Documents are rendered by the server, inert: raw HTML as text, no image loads, links
// to the web marked external (render.py).
document.querySelectorAll("[data-doc]").forEach((b) => b.onclick = async () => {
  const r = await call("/doc/" + b.dataset.doc);
  if (!r || r.status === 401) return;
  if (r.status >= 500 || r.status === 429) { notice("the document could not be shown (HTTP " + r.status + ")"); return; }
  $("doc").innerHTML = await r.text(); });
$("runs").onclick = async () => { const r = await call("/runs"); if (!r || !r.ok) return; const rows = await r.json();
  const t = el("table"); t.append(el("tr"));
  ["step", "ok", "cost", "run"].forEach((h) => t.firstChild.append(el("th", h)));
  rows.forEach((r) => { const tr = el("tr"); [label(r.step), r.ok ? "ok" : "x", usd(r.cost_usd),
    String(r.run || "").slice(0, 15)].forEach((v) => tr.append(el("td", v))); t.append(tr); });
  $("doc").textContent = ""; $("doc").append(t); };
// Before anything carries the token: no foreign service worker, and the address's token
// taken only if the server takes it.
(async () => { const offered = fromAddress();
  if (!(await noWorkers())) return;
  if (!(await adopt(offered)) && !token) { $("link").textContent = "locked"; return; }
  start(); })();
