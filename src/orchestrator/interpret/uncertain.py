"""Seed 000's heuristic question fallback: output without a question sentence still gives the
person a real question. Seed 000 takes the last sentence ending in `?`, else the "I'm not sure…"
sentence; here that sentence is turned into a question ("I'm not sure whether the dates should
be UTC or local time." → "Should the dates be UTC or local time?"), so the panel never says
"see its output".
"""

from __future__ import annotations

import re

from orchestrator.interpret.text import sentences

__all__ = ["fallback_question", "question_from_uncertainty", "uncertainty_question"]

_LEAD = re.compile(
    r"(?:\bI'?m|\bI am|\bI was|\bwe'?re)\s+(?:still\s+)?(?:not\s+(?:sure|certain|clear)|unsure|uncertain)"
    r"(?:\s+(?:about|of|on))?|"
    r"\bI\s+(?:couldn'?t|could not|can'?t|cannot|wasn'?t able to|was unable to|am unable to|"
    r"don'?t know|do not know|didn'?t find out)\s*(?:(?:determine|tell|figure out|work out|confirm|"
    r"find out|verify|establish|decide|see))?|"
    r"\bit(?:'s| is| was| remains)\s+(?:still\s+)?(?:unclear|ambiguous|not clear|not obvious|uncertain)|"
    r"\b(?:doesn'?t|does not|don'?t|do not|didn'?t|did not)\s+(?:say|specify|state|mention|make clear)|"
    r"\b(?:unclear|undecided|ambiguous)\b(?:\s+(?:to me|here))?",
    re.I,
)
_WH = r"whether|if|which|what|how|who|where|when"
_CLAUSE = re.compile(rf"(?:{_LEAD.pattern})\s*,?\s*(?P<wh>{_WH})\b\s+(?P<rest>.+)", re.I | re.S)
_CUT = re.compile(
    r"\s*(?:[;:—–]|\s-\s|,\s*(?:since|because|as|so|and I|but|which|given|so I|though|although|"
    r"or whether)\b|\s+\((?!\s*\w+\s*\)))"
)
_AUX = "should|would|could|can|will|shall|must|may|might|is|are|was|were|does|do|did|has|have|had"
_SUBJECT_AUX = re.compile(
    rf"^(?P<subj>(?:\S+\s+){{0,6}}?\S+)\s+(?P<aux>{_AUX})\b\s+(?P<rest>.+)$", re.I
)
_DETERMINED = re.compile(
    r"^(?:the|this|that|these|those|a|an|our|my|its|their|your|we|I|it|they|he|she|you)\b", re.I
)
_TO_VERB = re.compile(r"^to\s+(?P<rest>.+)$", re.I)
_WH_TO = re.compile(r"^(?P<obj>(?:\S+\s+){0,4}?)to\s+(?P<rest>.+)$", re.I)


def _clean(clause: str) -> str:
    clause = _CUT.split(clause.strip(), maxsplit=1)[0]
    clause = re.sub(r"[\s.!?…]+$", "", clause.strip().strip("*_`"))
    return clause


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def question_from_uncertainty(sentence: str) -> str | None:
    """A question for the person from one sentence of uncertainty; None when it is none.

    >>> question_from_uncertainty("I'm not sure whether the dates should be UTC or local time.")
    'Should the dates be UTC or local time?'
    >>> question_from_uncertainty("I couldn't determine if the endpoint needs auth.")
    'Can you confirm whether the endpoint needs auth?'
    >>> question_from_uncertainty("It's unclear which cache to use here")
    'Which cache should I use here?'
    """
    m = _CLAUSE.search(" ".join(sentence.split()))
    if m is None:
        return None
    wh, rest = m["wh"].lower(), _clean(m["rest"])
    if len(rest.split()) < 1:
        return None
    if wh in ("whether", "if"):
        if t := _TO_VERB.match(rest):
            return f"Should I {t['rest']}?"
        if s := _SUBJECT_AUX.match(rest):
            subj = s["subj"]
            if not re.search(rf"\b(?:{_AUX}|{_WH}|that|not)\b", subj, re.I):
                return f"{_cap(s['aux'].lower())} {subj} {s['rest']}?"
        return f"Can you confirm whether {rest}?"
    if t := _WH_TO.match(rest):
        obj = t["obj"].strip()
        return f"{_cap(wh)}{' ' + obj if obj else ''} should I {t['rest']}?"
    if (s := _SUBJECT_AUX.match(rest)) and not re.search(rf"\b(?:{_AUX})\b", s["subj"], re.I):
        if _DETERMINED.match(s["subj"]):  # "what the limit should be" → "What should the limit be?"
            return f"{_cap(wh)} {s['aux'].lower()} {s['subj']} {s['rest']}?"
        return f"{_cap(wh)} {rest}?"  # "which approach is better" → "Which approach is better?"
    return f"Can you tell me {wh} {rest}?"


def uncertainty_question(text: str) -> str | None:
    """The question built from the last sentence of uncertainty in `text`."""
    for s in reversed(sentences(text)):
        q = question_from_uncertainty(s)
        if q:
            return q
    return None


def fallback_question(text: str) -> str:
    """Seed 000's order: the last sentence ending in `?`, else one built from an "I'm not sure…"
    sentence, else a plain question about what to do next — never "see its output"."""
    asked = [s.strip() for s in sentences(text) if s.strip().endswith("?")]
    if asked:
        return asked[-1]
    return uncertainty_question(text) or (
        "The agent stopped without saying what it needs. Should it try again, skip this task, "
        "or stop the run?"
    )
