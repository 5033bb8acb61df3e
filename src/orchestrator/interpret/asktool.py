"""The agent's own ask tool as it appears in text: Roo Code / Cline end a turn that needs the user
with an `ask_followup_question` call (`<question>` and suggested answers); copied into a log or
an issue, that call is the structure the adapters did not see. When it is the last thing the
agent printed, the turn is waiting for a person — a question, not prose to weigh. The same holds
for a plan tool (Cursor's `create_plan`, Claude Code's `ExitPlanMode`, Cline's
`plan_mode_respond`): a plan the output ends on waits for the user to approve it. And Roo Code /
Cline's `attempt_completion`, the last thing printed, is the agent's own report that the task is
done: options or questions inside its result describe the work, they wait for nobody.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from orchestrator.rules.failure import last_match

_CALL = re.compile(
    r"<ask_followup_question>(?P<body>.*?)</ask_followup_question>|"
    r"\[Tool Use: ask_followup_question\](?P<body2>.*?)(?=\n\s*\n|\Z)",
    re.S,
)
_QUESTION = re.compile(
    r"<question>(.*?)</question>|<parameter name=\"question\">(.*?)</parameter>|"
    r"^\s*Question:[ \t]*(\S[^\n]*)",
    re.S | re.M,
)
"""The question: in the call's XML, or on its `Question:` line in Cline's early export format."""
_SUGGEST = re.compile(r"<suggest(?:\s[^>]*)?>(.*?)</suggest>", re.S)
_FOLLOW_JSON = re.compile(
    r"<parameter name=\"follow_up\">(.*?)</parameter>|^\s*Follow_up:[ \t]*(\[.*\])", re.S | re.M
)
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
    last = last_match(_CALL, text)
    if last is None or not _TRAILER.match(text[last.end() :]):
        return None
    body = last.group("body") or last.group("body2") or ""
    q = _QUESTION.search(body)
    question = _clean(next((g for g in q.groups() if g), "") if q else "")
    if not question:
        return None
    options = [_clean(s) for s in _SUGGEST.findall(body) if _clean(s)]
    if not options and (fj := _FOLLOW_JSON.search(body)):
        try:
            items = json.loads(fj.group(1) or fj.group(2))
            options = [
                str(i.get("text") or i.get("answer") or "").strip()
                for i in items
                if isinstance(i, dict)
            ]
        except (ValueError, AttributeError):
            options = []
    return AskCall(question, [o for o in options if o])


_PLAN_CALL = re.compile(
    r"data-tool-name=\"(?:create_plan|exit_plan_mode|ExitPlanMode|plan_mode_respond)\"|"
    r"<(?:plan_mode_respond|exit_plan_mode)>|\b(?:ExitPlanMode|create_plan)\(|"
    r"\[Tool Use: (?:plan_mode_respond|create_plan|exit_plan_mode)\]"
)
_FENCED = re.compile(r"^\s*(`{3,}|~{3,}).*?^\s*\1\s*$|^\s*(`{3,}|~{3,})[^\n]*\n.*\Z", re.S | re.M)
_NOT_PROSE = re.compile(
    r"^\s*(?:</?[\w-]+(?:\s[^>]*)?>|---+|\*\*User:\*\*|Parameters:|Tool use: \*\*\w+\*\*|"
    r"<summary>.*</summary>|[\]\[{}(),\"]*)\s*$"
)


def final_plan_call(text: str) -> bool:
    """The output ends on a plan tool's call (its parameters, closing wrappers): the plan waits
    for the user's approval."""
    text = text[-_SCAN:]
    last = last_match(_PLAN_CALL, text)
    if last is None:
        return False
    rest = text[last.end() :]
    if close := re.search(r"</(?:plan_mode_respond|exit_plan_mode)>", rest):
        rest = "\n" + rest[close.end() :]  # the call's own body is the plan
    else:  # Cline's call cut off after its <response> body: that body is the plan
        rest = re.sub(r"<response>.*?(?:</response>|\Z)", "", rest, flags=re.S)
    rest = _FENCED.sub("", rest)
    return all(_NOT_PROSE.match(line) for line in rest.splitlines()[1:])


_COMPLETION_CALL = re.compile(
    r"<attempt_completion>.*?</attempt_completion>|"
    r"\[Tool Use: attempt_completion\](?:(?!\n\[Tool (?:Use|Result)|\n\*\*User:\*\*).)*",
    re.S,
)
"""The call as XML, or in Cline's early export format: `[Tool Use: attempt_completion]` and its
`Result:`, paragraphs and all, up to the next tool call, tool result or user turn."""


def final_completion_call(text: str) -> bool:
    """The output ends on an `attempt_completion` call (closing wrappers, the turn separator or
    the environment may follow): the agent reported the task done."""
    text = text[-_SCAN:]
    last = last_match(_COMPLETION_CALL, text)
    return last is not None and _TRAILER.match(text[last.end() :]) is not None
