"""The agent's own ask tool as it appears in text: Roo Code / Cline end a turn that needs the user
with an `ask_followup_question` call (`<question>` and suggested answers); copied into a log or
an issue, that call is the structure the adapters did not see. When it is the last thing the
agent printed, the turn is waiting for a person — a question, not prose to weigh.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

_CALL = re.compile(
    r"<ask_followup_question>(?P<body>.*?)</ask_followup_question>|"
    r"\[Tool Use: ask_followup_question\](?P<body2>.*?)(?=\n\s*\n|\Z)",
    re.S,
)
_QUESTION = re.compile(
    r"<question>(.*?)</question>|<parameter name=\"question\">(.*?)</parameter>", re.S
)
_SUGGEST = re.compile(r"<suggest(?:\s[^>]*)?>(.*?)</suggest>", re.S)
_FOLLOW_JSON = re.compile(r"<parameter name=\"follow_up\">(.*?)</parameter>", re.S)
_TRAILER = re.compile(
    r"^(?:\s|</?(?:invoke|function_calls|minimax:tool_call|tool_call)[^>]*>|---|\*\*User:\*\*|"
    r"<environment_details>.*?</environment_details>)*\Z",
    re.S,
)
"""What may follow the call in an export: closing wrappers, the turn separator, environment."""


_SCAN = 20_000


@dataclass
class AskCall:
    question: str
    options: list[str] = field(default_factory=list)


def _clean(s: str) -> str:
    return " ".join(html.unescape(s).split())


def final_ask_call(text: str) -> AskCall | None:
    """The `ask_followup_question` call the output ends on, None when it ends on anything else."""
    text = text[-_SCAN:]  # the call is at the end: a bounded scan keeps megabyte logs linear
    last = None
    for m in _CALL.finditer(text):
        last = m
    if last is None or not _TRAILER.match(text[last.end() :]):
        return None
    body = last.group("body") or last.group("body2") or ""
    q = _QUESTION.search(body)
    question = _clean((q.group(1) or q.group(2)) if q else "")
    if not question:
        return None
    options = [_clean(s) for s in _SUGGEST.findall(body) if _clean(s)]
    if not options and (fj := _FOLLOW_JSON.search(body)):
        try:
            items = json.loads(fj.group(1))
            options = [str(i.get("text", "")).strip() for i in items if isinstance(i, dict)]
        except (ValueError, AttributeError):
            options = []
    return AskCall(question, [o for o in options if o])
