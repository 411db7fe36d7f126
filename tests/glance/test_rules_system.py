"""ps, top, lsof, ss, netstat, hostname, who and docker: no name resolution, no environment,
nothing that never returns."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import decide, explain

ALLOWED = [
    "ps aux",
    "ps auxf",
    "ps -ef",
    "ps -eo pid,ppid,etime,cmd --sort=-%mem",
    "ps -p 1 -o pid=,comm=",
    "ps axo pid,comm",
    "ps -u root",
    "ps 1",
    "lsof -nP -iTCP -sTCP:LISTEN",
    "lsof -n -i :8080",
    "lsof -n -i TCP@127.0.0.1:80",
    "lsof -n -p 123",
    "lsof -n +D /tmp",
    "lsof -n -s TCP:LISTEN -i",
    "ss -tlnp",
    "ss -s",
    "ss -lnt sport = :8080",
    "ss -tn state established dport = :443",
    "ss -tn dst 10.0.0.1",
    "netstat -tlnp",
    "netstat -i",
    "netstat -s",
    "netstat -rn",
    "hostname",
    "hostname -s",
    "hostname -I",
    "who",
    "who am i",
    "w -h",
    "pgrep -fl uvicorn",
    "pstree -p",
    "docker ps -a",
    "docker images",
    "docker logs --tail 50 web",
    "docker logs -n 20 -t web",
    "docker stats --no-stream",
    "docker version --format '{{.Server.Version}}'",
    "docker info",
    "docker system df -v",
    "docker top web",
    "docker port web",
    "docker network ls",
    "docker network inspect bridge",
    "docker volume ls -q",
    "docker context ls",
    "docker compose ps",
    "docker compose logs --tail=20",
    "docker --version",
]

REFUSED = [
    ("ps e", "environments"),
    ("ps auxe", "environments"),
    ("ps eww", "environments"),
    ("ps -o pid,environ", "environ"),
    ("ps -eo environ", "environ"),
    ("ps --format=pid,environ", "environ"),
    ("ps -o pid=X,environ", "environ"),  # the header ends at the comma
    ("ps -o 'pid=A environ'", "environ"),
    ("ps opid", "not allowed"),
    ("ps -n System.map", "not allowed"),
    ("top", "creates ~/.config/procps"),
    ("top -b -n 1", "creates ~/.config/procps"),  # measured: the mkdir happens in batch mode too
    ("top -bn1 -o %MEM", "creates ~/.config/procps"),
    ("lsof", "add -n"),
    ("lsof -i :8080", "add -n"),
    ("lsof -i @evil.example", "resolves a host name"),
    ("lsof -n -i @evil.example", "resolves a host name"),
    ("lsof -n -i TCP@evil.example:80", "resolves a host name"),
    ("lsof -n -r 1", "repeats forever"),
    ("lsof -n +r", "repeats forever"),
    ("lsof -n -D b", "not allowed"),
    ("lsof -n -g -r1", "needs a value"),
    ("lsof -n +M -i", "not allowed"),
    ("ss dst evil.example", "host names"),
    ("ss -tn dst evil.example:443", "host names"),
    ("ss -r", "-r"),
    ("ss -K dst 1.2.3.4", "-K"),
    ("ss -E", "-E"),
    ("ss -D dump", "-D"),
    ("ss -F filter.txt", "-F"),
    ("ss -N otherns", "-N"),
    ("netstat -tlp", "add -n"),
    ("netstat -r", "add -n"),
    ("netstat -c -n", "-c"),
    ("hostname -f", "-f"),
    ("hostname -A", "-A"),
    ("hostname -i", "-i"),
    ("hostname -d", "-d"),
    ("hostname evil", "sets the host name"),
    ("who --lookup", "--lookup"),
    ("who /var/log/wtmp", "am i"),
    ("docker inspect web", "environment"),
    ("docker container inspect web", "environment"),
    ("docker image inspect alpine", "environment"),
    ("docker top web e", "too many operands"),
    ("docker logs -f web", "-f"),
    ("docker logs --follow web", "--follow"),
    ("docker stats", "--no-stream"),
    ("docker events", "not read-only"),
    ("docker run alpine", "not read-only"),
    ("docker exec web sh", "not read-only"),
    ("docker -H tcp://evil ps", "global options"),
    ("docker --context prod ps", "global options"),
    ("docker --config /tmp/x ps", "global options"),
    ("docker --tlsverify ps", "global options"),
    ("docker compose config", "not read-only"),
    ("docker compose up", "not read-only"),
    ("docker logs *", "glob"),
    ("docker logs web *", "wildcard"),
    ("kubectl get pods", "API server"),
    ("kubectl get --raw /api", "API server"),
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(("cmd", "reason"), REFUSED)
def test_refused_with_reason(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")
