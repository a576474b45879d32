"""Reading the action out of a model's reply.

Accepted forms, last one wins: ``<action>...</action>`` and a line ``Action: ...`` (the
ReAct form of the prompts). A reply in neither form is passed to the environment as it
is and counted as a format error; the environment then decides whether it understood it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGGED = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)
_REACT = re.compile(r"^\s*action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class ParsedAction:
    action: str
    well_formed: bool  # the reply followed one of the accepted forms


def parse_action(reply: str) -> ParsedAction:
    tagged = _TAGGED.findall(reply)
    if tagged and tagged[-1].strip():
        return ParsedAction(tagged[-1].strip(), True)
    react = _REACT.findall(reply)
    if react:
        return ParsedAction(react[-1].strip().strip("`\"'").strip(), True)
    return ParsedAction(reply.strip(), False)
