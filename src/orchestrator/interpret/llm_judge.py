"""The optional LLM interpreter (seed 000 Tasks 4.9–4.11): a second opinion in seed 000's JSON shape.

The model sees the head and the tail of long output (the end matters most) and answers
`needs_human`, `question`, `options`, `recommendation`, `task_completed`, `task_failed`,
`error_message`, plus `category`. Any failure raises `LLMError`; the caller keeps the rules'
answer. There is deliberately no "assume completed" fallback here.
"""

from __future__ import annotations

from typing import Any

from orchestrator.interpret.model import WHY, WHY_GENERIC, Interpretation
from orchestrator.llm import LLMBackend, LLMError, extract_json
from orchestrator.models import CATEGORIES, Category, Verdict

HEAD_CHARS = 2_000
TAIL_CHARS = 10_000

PROMPT = """You judge the output of an AI coding agent that was given one task. Return ONLY one JSON \
object, no markdown, no explanation:

{{
  "needs_human": true or false,
  "question": "the question the agent asks the human" or null,
  "options": ["option A", "option B"] or null,
  "recommendation": "the option the agent recommends" or null,
  "task_completed": true or false,
  "task_failed": true or false,
  "error_message": "the error that made the task fail" or null,
  "category": "ambiguous_requirements" | "extreme_destructive" | "external_service" | null
}}

Rules:
- needs_human is true only when the agent cannot continue without a person: it asks which of \
several approaches to take, needs information or an approval, or reports it is blocked. Offers at \
the end of finished work ("Would you like me to also...?", "Let me know if...") are NOT questions: \
that work is completed.
- category "extreme_destructive": the agent proposes or asks to run something that destroys data \
(DROP TABLE, prisma migrate reset, rm -rf of real data, force-push to main). "external_service": an \
auth, quota or network failure of a remote service (401/403, invalid or expired key, 429, DNS or \
connection failure to a remote host). "ambiguous_requirements": the task allows several valid \
approaches and the agent asks which. Otherwise null.
- task_failed is true when the work is not done (errors, failing tests, the agent gave up).

Output to analyze:
<output>
{output}
</output>
"""


def clip(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    omitted = len(text) - HEAD_CHARS - TAIL_CHARS
    return f"{text[:HEAD_CHARS]}\n[... {omitted} characters omitted ...]\n{text[-TAIL_CHARS:]}"


def _opt_str(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str):
        v = str(v)
    v = v.strip()
    return v or None


def parse_answer(data: dict[str, Any]) -> Interpretation:
    """Seed 000's JSON shape (plus `category`) as an Interpretation; LLMError when unusable."""
    flags = {k: data.get(k) for k in ("needs_human", "task_completed", "task_failed")}
    if not any(isinstance(v, bool) for v in flags.values()):
        raise LLMError(f"answer lacks needs_human/task_completed/task_failed: {str(data)[:160]}")
    raw_cat = data.get("category")
    category: Category | None = None
    if isinstance(raw_cat, str) and raw_cat.strip():
        key = raw_cat.strip().lower()
        category = next((c for c in CATEGORIES if c == key), None)
    verdict: Verdict
    if flags["needs_human"] is True or category is not None:
        verdict = "needs_human"
    elif flags["task_failed"] is True:
        verdict = "failed"
    elif flags["task_completed"] is True:
        verdict = "completed"
    else:
        raise LLMError("answer says neither completed, failed nor needs_human")
    options_raw = data.get("options")
    options = (
        [str(o).strip() for o in options_raw if str(o).strip()]
        if isinstance(options_raw, list)
        else []
    )
    needs = verdict == "needs_human"
    return Interpretation(
        verdict=verdict,
        category=category if needs else None,
        question=_opt_str(data.get("question")) if needs else None,
        options=options if needs else [],
        recommendation=_opt_str(data.get("recommendation")) if needs else None,
        why=(WHY[category] if category else WHY_GENERIC) if needs else None,
        source="llm",
        confident=True,
        error=_opt_str(data.get("error_message")) if verdict == "failed" else None,
    )


def ask_llm(llm: LLMBackend, text: str, *, timeout: float = 60) -> Interpretation:
    answer = llm.complete(PROMPT.format(output=clip(text)), timeout=timeout)
    return parse_answer(extract_json(answer))
