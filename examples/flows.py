"""Your own workflow for `flower run`: one step that reads a word from seed.txt.

    flower run examples/flows.py:main -w <folder with a seed.txt>

`main` returns the Workflow; flower runs it with the same terminal as the main job
(questions, the inbox, side questions, Ctrl-C) and continues it on the next run.
"""

from __future__ import annotations

from flower import AgentSpec, Step, Workflow

TERSE = AgentSpec(
    name="terse",
    instructions="回答极简,一行以内,不解释不寒暄。",
    allowed_tools=["Read", "Glob"],
    max_turns=4,
)


def main() -> Workflow:
    return Workflow([Step("取词", TERSE, "读 seed.txt,只回文件里那个词。")])
