"""Pulling the options and the recommendation out of an agent's question.

Agents write options in many shapes: `A)` / `A.` / `(a)` letters, numbers, bullets,
`**Option A: …**` headings, and markdown tables with an option column. The block closest to the
question wins; a list of *changes made* far from any question is never mistaken for options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.interpret.text import strip_md

_LETTER = re.compile(r"^\s*(?:[-*•]\s+)?(?:\*\*|__)?(?:\(([A-Za-z])\)|([A-Za-z])[).:])\s+(\S.*)$")
NUMBERED = re.compile(r"^\s*(?:\*\*|__)?(?:\((\d+)\)|(\d+)[.)])\s+(\S.*)$")
"""A numbered list item (`1. …`, `(2) …`, `**3) …`): the number, then the text."""
_BULLET = re.compile(r"^\s{0,3}[-*•]\s+(\S.*)$")
_HEADING = re.compile(
    r"^\s*+(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:Option|Variante|Approach|Alternative|Choice|Möglichkeit|"
    r"Ansatz|Weg)\s+([A-Za-z]|\d+)\s*(?:[:.)–—-]|\*\*)\s*(.*)$",
    re.I,
)
_BOLD_ITEM = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)\s*(\d+|[A-Za-z])[.):]\s+(.+?)\s*(?:\*\*|__)?\s*$"
)
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_TABLE_SEP = re.compile(r"^\s*+\|?\s*:?-{2,}")  # `*+`: an indent is not rescanned (quadratic)
_OPTION_COL = re.compile(
    r"^(option|options|approach|choice|alternative|variante|ansatz|möglichkeit|strategy|"
    r"strategie|backend|format|choice)s?$",
    re.I,
)
_INTRO = re.compile(
    r"(option|approach|choice|alternative|way|interpretation|possibilit|variant|either|"
    r"Optionen|Varianten|Möglichkeit|Ansätze|Wege|reasonable|candidates|pick|choose|"
    r"could|can|decision|decide|between|one of|Entscheidung)\w*\b.*:\s*$",
    re.I,
)


@dataclass
class _Block:
    kind: str
    start: int
    end: int
    items: list[str]
    intro: bool


def _clean_item(s: str) -> str:
    s = re.sub(
        r"^(?:\*\*|__)?(?:Option|Variante|Approach)\s+(?:[A-Za-z]|\d+)\s*[:.)–—-]\s*",
        "",
        s.strip(),
        flags=re.I,
    )
    s = strip_md(s)
    return re.sub(r"\s+", " ", s).strip()


def _sequential_suffixes(keys: list[str]) -> list[bool]:
    """For each p, whether keys[p:] is a list's own numbering: 0/1, 2, 3… or a, b, c…

    Computed from the end in one pass, so every start inside a long run is answered at once.
    """
    m = len(keys)
    out = [False] * m
    digits = letters = False  # keys[p+1:] all digits counting up by one / letters likewise
    for p in range(m - 1, -1, -1):
        k, nxt = keys[p], keys[p + 1] if p + 1 < m else None
        if nxt is None:
            digits, letters = k.isdigit(), k.isalpha()
        else:
            digits = digits and k.isdigit() and int(nxt) == int(k) + 1
            letters = letters and k.isalpha() and ord(nxt.lower()) == ord(k.lower()) + 1
        if m - p >= 2:
            out[p] = (digits and int(k) <= 1) or (letters and k.lower() == "a")
    return out


@dataclass
class _Run:
    """One list of KIND scanned from its first item: later starts inside it share the scan."""

    end: int
    at: dict[int, int]
    """line index of an item -> its position in keys/items"""
    keys: list[str]
    items: list[str]
    sequential: list[bool]


def _collect(kind: str, rx: re.Pattern[str], lines: list[str], i: int) -> _Run:
    """From line I, the items of one list of KIND (where it ends does not depend on I)."""
    keys: list[str] = []
    items: list[str] = []
    at: dict[int, int] = {}
    n = len(lines)
    j = i
    last_item = i
    while j < n:
        mm = rx.match(lines[j])
        if mm:
            at[j] = len(items)
            if kind == "bullet":
                items.append(mm.group(1))
            elif kind == "heading":
                keys.append(mm.group(1))
                items.append(mm.group(2))
            else:
                keys.append(mm.group(1) or mm.group(2))
                items.append(mm.group(3))
            last_item = j
            j += 1
            continue
        nxt = lines[j]
        if kind == "heading":
            # a heading's paragraph may follow it; the next heading must come soon
            if j - last_item <= 6 and not _LETTER.match(nxt) and not NUMBERED.match(nxt):
                j += 1
                continue
            break
        if not nxt.strip():
            if j + 1 < n and rx.match(lines[j + 1]):
                j += 1
                continue
            break
        if nxt.startswith(("  ", "\t")):
            j += 1  # continuation or sub-bullet of the previous item
            continue
        break
    return _Run(last_item + 1, at, keys, items, _sequential_suffixes(keys))


def _intro_before(lines: list[str], i: int) -> bool:
    """Whether the paragraph just above line I announces options ("Two options:")."""
    para: list[str] = []
    for k in range(i - 1, max(-1, i - 6), -1):
        if not lines[k].strip():
            if para:
                break
            continue
        para.insert(0, lines[k].strip())
    return bool(para) and bool(_INTRO.search(" ".join(para)))


def _list_blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    kinds = (
        ("letter", _LETTER),
        ("number", NUMBERED),
        ("heading", _HEADING),
        ("heading", _BOLD_ITEM),
        ("bullet", _BULLET),
    )
    runs: list[_Run | None] = [None] * len(kinds)
    i = 0
    while i < len(lines):
        found: _Block | None = None
        for k, (kind, rx) in enumerate(kinds):
            if not rx.match(lines[i]):
                continue
            run = runs[k]
            if run is None or i not in run.at:
                run = runs[k] = _collect(kind, rx, lines, i)
            p = run.at[i]
            ok = run.sequential[p] if kind != "bullet" else len(run.items) - p >= 2
            if ok:
                items = run.items[p:]
                found = _Block(
                    kind, i, run.end, [_clean_item(t) for t in items], _intro_before(lines, i)
                )
                break
        if found is not None:
            blocks.append(found)
            i = found.end
        else:
            i += 1
    return blocks


def _table_blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    i = 0
    while i < len(lines) - 2:
        if _TABLE_ROW.match(lines[i]) and _TABLE_SEP.match(lines[i + 1]):
            header = [strip_md(c) for c in lines[i].strip().strip("|").split("|")]
            rows: list[list[str]] = []
            j = i + 2
            while j < len(lines) and _TABLE_ROW.match(lines[j]):
                rows.append([strip_md(c) for c in lines[j].strip().strip("|").split("|")])
                j += 1
            col = next((k for k, h in enumerate(header) if _OPTION_COL.match(h.strip())), None)
            intro = False
            for k in range(i - 1, max(-1, i - 4), -1):
                if lines[k].strip():
                    intro = bool(
                        re.search(
                            r"option|approach|choice|alternative|Optionen|Varianten", lines[k], re.I
                        )
                    )
                    break
            if col is None and intro:
                col = 0
            if col is not None and len(rows) >= 2:
                items = [r[col].strip() for r in rows if col < len(r) and r[col].strip()]
                blocks.append(_Block("table", i, j, items, True))
            i = j
            continue
        i += 1
    return blocks


_KIND_RANK = {"explicit": 0, "heading": 1, "letter": 1, "table": 2, "number": 3, "bullet": 4}


_REFERS = re.compile(
    r"\b(?:which|welche\w*|one of|these|the following|options?|either|Variante\w*|Optionen)\b", re.I
)


def extract_options(
    text: str, *, anchor: int | None = None, question: str | None = None
) -> list[str]:
    """Options offered in TEXT; ANCHOR is the line index of QUESTION (the closest block wins).

    A plain numbered or bulleted list counts only when a line before it announces options
    ("Two options:", "The approaches I see:") or the question right next to it refers to them
    ("Which one…?"): a list of changes or plan steps is not a set of options.
    """
    lines = text.split("\n")
    m = next(
        (
            k
            for k, ln in enumerate(lines)
            if re.match(r"^\s*\**(OPTIONS|Optionen|Options)\**\s*:?\**\s*$", ln.strip(), re.I)
        ),
        None,
    )
    if m is not None:
        inline = re.match(r"^\s*OPTIONS:\s*(\S.*)$", lines[m])
        rest = lines[m + 1 :]
        for rx_blocks in (_list_blocks(rest), _table_blocks(rest)):
            near = [b for b in rx_blocks if b.start <= 2]
            if near:
                return near[0].items
        if inline:
            return [inline.group(1).strip()]
    inline_m = next((k for k, ln in enumerate(lines) if re.match(r"^\s*OPTIONS:\s*\S", ln)), None)
    if inline_m is not None:
        rest = [re.sub(r"^\s*OPTIONS:\s*", "", lines[inline_m]), *lines[inline_m + 1 :]]
        blocks = _list_blocks(rest)
        if blocks and blocks[0].start == 0:
            return blocks[0].items
        parts = re.split(r"\s+(?=[A-Z]\)\s)", rest[0])
        if len(parts) >= 2:
            return [_clean_item(re.sub(r"^[A-Z]\)\s*", "", p)) for p in parts]
        return [rest[0].strip()]

    blocks = _list_blocks(lines) + _table_blocks(lines)
    if not blocks:
        return _either_or(question)
    if anchor is None:
        anchor = len(lines)

    def score(b: _Block) -> tuple[int, int]:
        dist = anchor - b.end if b.end <= anchor else b.start - anchor
        rank = _KIND_RANK.get(b.kind, 5)
        if b.kind in ("bullet", "number") and not b.intro:
            rank += 3
        return (rank + max(0, dist) // 6, max(0, dist))

    refers = bool(question and _REFERS.search(question))
    candidates = [
        b
        for b in blocks
        if b.kind not in ("bullet", "number")
        or b.intro
        or (refers and min(abs(anchor - b.end), abs(b.start - anchor)) <= 3)
    ]
    if not candidates:
        return _either_or(question)
    best = min(candidates, key=score)
    far = best.end < anchor - 25 or best.start > anchor + 25
    return _either_or(question) if far else best.items


_EITHER_OR = (
    re.compile(
        r"\b(?:use|be|apply|follow|go with|pick|choose|prefer|want|keep)\s+(?:the\s+|a\s+|an\s+)?"
        r"([^,;:?]{1,60}?)\s+or\s+(?:the\s+|a\s+|an\s+)?([^,;:?]{1,60}?)\s*\?\s*$",
        re.I,
    ),
    re.compile(
        r"^(?:Soll|Sollen)\s+(?:ich|wir)\s+([^,;:?]{1,60}?)\s+oder\s+([^,;:?]{1,60}?)\s+"
        r"(?:verwenden|nehmen|nutzen|umsetzen|einsetzen)\s*\?\s*$",
        re.I,
    ),
)


def _either_or(question: str | None) -> list[str]:
    """The two alternatives of a short "…use X or Y?" question."""
    if not question:
        return []
    m = next((mm for rx in _EITHER_OR if (mm := rx.search(question.strip()))), None)
    if not m:
        return []
    a, b = (strip_md(x).strip("`") for x in m.groups())
    if not a or not b or len(a.split()) > 5 or len(b.split()) > 5:
        return []
    return [a, b]


_RECO = [
    # `[^\S\n]*`, not `\s*`: the same group, without rescanning a run of blank lines per line
    re.compile(r"^[^\S\n]*\**RECOMMENDATION\**\s*:\**\s*(.+)$", re.I | re.M),
    re.compile(r"\*\*Recommend(?:ed|ation)\s*:?\*\*\s*:?\s*(.+?)(?:$|\n)", re.I),
    re.compile(
        r"\b(?:I(?:'d| would)?|We(?:'d| would)?)\s+(?:strongly\s+)?recommend(?:ing)?\s+(.+?)(?:[.!](?:\s|$)|$)",
        re.I | re.M,
    ),
    re.compile(
        r"\bI(?:'d| would)\s+(?:lean|go|opt)\s+(?:towards?|for|with)\s+(.+?)(?:[.!](?:\s|$)|$)",
        re.I | re.M,
    ),
    re.compile(r"\bI\s+lean\s+towards?\s+(.+?)(?:[.!](?:\s|$)|$)", re.I | re.M),
    re.compile(
        r"\bMy\s+(?:suggestion|recommendation|preference|pick)\s*(?:is|would be|:)\s*:?\s*(.+?)(?:[.!](?:\s|$)|$)",
        re.I | re.M,
    ),
    re.compile(r"\bI(?:'d| would)?\s+suggest\s+(.+?)(?:[.!](?:\s|$)|$)", re.I | re.M),
    re.compile(r"\bI(?:'d| would)\s+prefer\s+(.+?)(?:[.!](?:\s|$)|$)", re.I | re.M),
    re.compile(r"\bRecommended\s*:\s*(.+?)$", re.I | re.M),
    re.compile(
        r"\b(?:Meine\s+)?Empfehlung\s*(?:ist|wäre|:)\s*:?\s*(.+?)(?:[.!](?:\s|$)|$)", re.I | re.M
    ),
    re.compile(r"\bIch\s+(?:würde\s+)?empfehle?\s+(.+?)(?:[.!](?:\s|$)|$)", re.I | re.M),
    re.compile(r"\bIch\s+würde\s+(.+?)\s+(?:nehmen|wählen|bevorzugen|empfehlen)\b", re.I | re.M),
]


def extract_recommendation(text: str, options: list[str] | None = None) -> str | None:
    """The agent's recommended choice, if it gave one."""
    for rx in _RECO:
        m = rx.search(text)
        if m:
            rec = strip_md(m.group(1)).rstrip(" ,;:")
            if rec:
                return rec[:300]
    for opt in options or []:
        if re.search(r"\((?:recommended|empfohlen)\)|\brecommended\b", opt, re.I):
            return re.sub(r"\s*\((?:recommended|empfohlen)\)", "", opt, flags=re.I).strip()
    return None
