"""A small learned fallback for where the rules say they are unsure (issue 11).

The text rules were tuned on a pool of real agent outputs and stopped carrying over to new ones;
they are unsure on about half of real outputs, where their answer is a default. This module is a
multinomial logistic regression over the last words of the output (where the agent ends up), a
few structural counts of its end against its head, and the rules' own unsure reading. It is trained
by `tests/judge_model_train.py` (pure Python, cross-validated on `tests/corpus_real/tune/`); its
weights are `learned_weights.json`, read on first use only (CLI start-up time matters).

`apply()` is called by `interpret_rules`' caller only when the rules are unsure: a confident
answer is never changed, and `confident` stays False, so `--llm` is still asked there.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from orchestrator.interpret.model import WHY, Interpretation
from orchestrator.interpret.text import sentences
from orchestrator.interpret.uncertain import uncertainty_question
from orchestrator.models import Category, Verdict

CLASSES: tuple[Verdict, ...] = ("completed", "failed", "needs_human")
WEIGHTS = Path(__file__).with_name("learned_weights.json")

END_CHARS = 600
"""The agent's last words: their words and pairs are features of their own."""
TAIL_CHARS = 3000
"""The stretch before that (the final turn): words only; the rest of the text is only counted."""

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[?!:✓✗✔✘❌✅]")
_FAIL = re.compile(
    r"\b(?:error|errors|fail\w*|exception|traceback|cannot|can't|unable|broken|still|not working|"
    r"undefined|denied|refused|timeout|timed out|crash\w*)\b",
    re.I,
)
_SUCCESS = re.compile(
    r"\b(?:pass(?:es|ed|ing)?|success\w*|done|complete[ds]?|fixed|works|working|implemented|"
    r"summary|all set|ready)\b|✅|✓",
    re.I,
)
_TOOLISH = re.compile(
    r"^\s*(?:[$>#│|+\-@]|\d+\s*[|:]|[A-Za-z]:\\|/\S+|\S+\.\w{1,5}:\d|at |File \"|\w+Error\b|"
    r"\[\w+\]|\d{2}:\d{2}|```)"
)
_ADDRESS = re.compile(
    r"\b(?:you|your|let me know|would you|should i|do you|shall i|can you|could you|please)\b",
    re.I,
)


def _words(text: str) -> list[str]:
    return ["0" if w.isdigit() else w for w in _WORD.findall(text.lower())]


def _level(x: float, cuts: tuple[float, ...]) -> int:
    return sum(x >= c for c in cuts)


def features(text: str, rules: Interpretation) -> dict[str, float]:
    """The features of one output: bag of words of the end and of the final turn, word pairs of
    the end, where the last question mark is, how tool-like the last lines are, whether the last
    paragraph speaks to the user, failure and success words in the tail against the head, and the
    rules' own reading. Only the last TAIL_CHARS are tokenised, so 64 KB costs what 3 KB does."""
    body = text.rstrip()
    end, tail, head = body[-END_CHARS:], body[-TAIL_CHARS:-END_CHARS], body[:-TAIL_CHARS]
    names: dict[str, float] = {"bias": 1.0}
    ew = _words(end)
    for w in ew:
        names[f"e:{w}"] = 1.0
    for a, b in itertools.pairwise(ew):
        names[f"e2:{a}_{b}"] = 1.0
    for w in ew[-12:]:
        names[f"z:{w}"] = 1.0
    for w in _words(tail):
        names[f"t:{w}"] = 1.0
    q = body.rfind("?")
    names[f"q:{_level(len(body) - q, (80, 300, 1000, 3000)) if q >= 0 else 9}"] = 1.0
    last = [ln for ln in body[-4000:].splitlines() if ln.strip()][-20:]
    if last:
        tool = sum(bool(_TOOLISH.match(ln)) for ln in last) / len(last)
        names[f"tool:{_level(tool, (0.2, 0.5, 0.8))}"] = 1.0
        names[f"you:{bool(_ADDRESS.search(last[-1]))}"] = 1.0
    paragraph = body[-END_CHARS:].rsplit("\n\n", 1)[-1]
    names[f"para_you:{bool(_ADDRESS.search(paragraph))}"] = 1.0
    recent, before = body[-1500:], body[:-1500]
    fail_t, fail_h = len(_FAIL.findall(recent)), len(_FAIL.findall(before))
    ok_t = len(_SUCCESS.findall(recent))
    names["fail_tail"] = math.log1p(fail_t)
    names["fail_head"] = math.log1p(fail_h)
    names["ok_tail"] = math.log1p(ok_t)
    names[f"fail_vs_ok:{_level(fail_t - ok_t, (-3, 0, 1, 4))}"] = 1.0
    names[f"len:{_level(len(body), (300, 1000, 3000, 10000))}"] = 1.0
    names[f"head:{bool(head)}"] = 1.0
    names[f"r:{rules.verdict}"] = 1.0
    names[f"rs:{rules.source}"] = 1.0
    names[f"rq:{rules.question is not None}:{rules.category}"] = 1.0
    return names


def probabilities(weights: dict[str, list[float]], feats: dict[str, float]) -> list[float]:
    """Softmax over CLASSES of the weights times the features."""
    z = [0.0] * len(CLASSES)
    for f, v in feats.items():
        w = weights.get(f)
        if w is not None:
            for k in range(len(CLASSES)):
                z[k] += w[k] * v
    top = max(z)
    e = [math.exp(x - top) for x in z]
    s = sum(e)
    return [x / s for x in e]


@lru_cache(maxsize=1)
def _model() -> tuple[dict[str, list[float]], dict[str, float]]:
    raw: dict[str, Any] = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    weights = {k: [float(x) for x in v] for k, v in raw["weights"].items()}
    return weights, {k: float(v) for k, v in raw["thresholds"].items()}


def predict(text: str, rules: Interpretation) -> tuple[Verdict, float]:
    """The model's verdict for an output the rules read as RULES, and its probability."""
    weights, _ = _model()
    p = probabilities(weights, features(text, rules))
    k = max(range(len(CLASSES)), key=lambda i: p[i])
    return CLASSES[k], p[k]


_EXTERNAL = re.compile(
    r"\b(?:api key|token|credential\w*|log ?in|authenticat\w*|billing|quota|credits|subscription|"
    r"permission|access|network|proxy|firewall|vpn|certificate|ssl|account)\b",
    re.I,
)


def _question(text: str) -> str:
    """Seed 000's fallback, as a real question: the last question-like sentence of the end, else
    one built from an "I'm not sure…" sentence, else a plain one about what to do next."""
    end = text.rstrip()[-TAIL_CHARS:]
    asked = [s for s in sentences(end) if s.endswith("?") and len(s.split()) >= 3]
    if asked:
        return asked[-1][-400:]
    return uncertainty_question(end) or (
        "The agent stopped without saying whether it is done. Is the result what you wanted, or "
        "should it try again?"
    )


def _error(text: str) -> str | None:
    lines = [ln.strip() for ln in text.rstrip()[-TAIL_CHARS:].splitlines() if _FAIL.search(ln)]
    return lines[-1][:300] if lines else None


def apply(text: str, rules: Interpretation) -> Interpretation:
    """RULES, or the model's verdict where the rules are unsure and the model is sure enough
    (its probability at least the cross-validated threshold for that verdict)."""
    if rules.confident:
        return rules
    _, thresholds = _model()
    verdict, p = predict(text, rules)
    if verdict == rules.verdict or p < thresholds[verdict]:
        return rules
    return replaced(text, rules, verdict, p)


def replaced(text: str, rules: Interpretation, verdict: Verdict, p: float) -> Interpretation:
    """The unsure RULES reading with the model's VERDICT instead: a failure keeps an error line,
    an escalation gets a real question and a category."""
    evidence = f"learned fallback: {verdict} (p={p:.2f}); the rules said {rules.verdict}"
    if verdict != "needs_human":
        return Interpretation(
            verdict=verdict,
            source=rules.source,
            confident=False,
            evidence=evidence,
            error=(rules.error or _error(text)) if verdict == "failed" else None,
        )
    category: Category = (
        "external_service"
        if _EXTERNAL.search(text.rstrip()[-END_CHARS:])
        else "ambiguous_requirements"
    )
    return Interpretation(
        verdict="needs_human",
        category=category,
        question=_question(text),
        why=WHY[category],
        source=rules.source,
        confident=False,
        evidence=evidence,
    )
