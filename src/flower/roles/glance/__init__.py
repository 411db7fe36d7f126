"""The glance classifier's parts: which Bash commands a coordinator may run unsupervised.

:mod:`flower.roles.ephemeral` is the public face and the policy (which binaries are glances at
all); this package holds the machinery, one module per concern:

* :mod:`.lexer` - bash-like tokenizer that refuses what it does not model;
* :mod:`.paths` - files a glance must not read (secrets, ``/proc``, devices), glob-aware;
* :mod:`.options` - the generic option allow-list and a parser that reads options the way
  getopt-style binaries do;
* :mod:`.binaries` - allow-lists of the simple tools (cat, head, sort, ls...);
* :mod:`.system` - ps, top, lsof, ss, netstat, hostname, who, docker;
* :mod:`.find` - bfs and GNU find; :mod:`.grep` - ugrep, GNU grep and ripgrep;
* :mod:`.awk`, :mod:`.sed`, :mod:`.jq` - the languages, judged by what they can reach;
* :mod:`.git`, :mod:`.gitopts` - read-only git subcommands and their options;
* :mod:`.shell` - echo, printf, test, command, toolchain versions, pip.

Every checker has the signature ``check(verb, args) -> None`` and raises
:class:`.lexer.Refuse` with a one-line English reason when the command is not a glance.
"""
