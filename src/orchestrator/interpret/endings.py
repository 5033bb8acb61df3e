"""How the agent's final words end: on a step it announces, on an intention, or on a plan that
waits for the user's go-ahead.

Each reads only the last sentence or two. An intention ends the turn before the work it
announces (the attempt failed: nothing was done); a plan offered on the user's approval ("If
this plan looks right, I'll implement it") waits for a person. A sentence the user's wish
governs ("If you want, next I'll draft…", "Let me know if…") is an offer after the work, and is
neither. Work it names as remaining, with a last line that asks whether to go on, is the task
stopped half-way for a go-ahead.
"""

from __future__ import annotations

import re

from orchestrator.interpret.phrases import REPEATED_FAILURES
from orchestrator.interpret.text import Line, sentences
from orchestrator.rules.failure import INTENT

__all__ = ["announced_step", "asks_to_continue", "awaits_go_ahead", "ends_on_intention"]

_RECORD_LINE = re.compile(
    r"^[-*_=~\s]*$|^(?:Read file|Listed directory|Searched (?:codebase|files|the web)|Grep search)\b"
)
"""A separator (`---` between the turns of an export) or a tool's one-line record (Cursor's
`Read file: README.md`): no words of the agent."""
_ANNOUNCES = re.compile(
    r"\b(?:Let['’]s|Let us|Let me|(?:Now|Next),? (?:I['’]ll|I will|we['’]ll|we will)|"
    r"I['’]ll now|I will now)\b(?!\s+know\b)[^.!?:]*:$",
    re.I,
)
"""A sentence that announces the next step and introduces it with a colon."""


def announced_step(tail: list[Line]) -> str | None:
    """The agent's last words announce a step ("Let's run the tests again:", "Now I'll update
    the README:") and nothing of its own follows: the output stopped before that step, whatever
    it claimed before it."""
    texts = [ln.text.strip() for ln in tail if ln.text.strip()]
    while texts and _RECORD_LINE.match(texts[-1]):
        texts.pop()
    if not texts or not texts[-1].endswith(":"):
        return None
    last = sentences(" ".join(" ".join(texts[-3:]).split()[-60:]))[-1:]
    return last[0] if last and _ANNOUNCES.search(last[0]) else None


_CONDITIONAL = re.compile(
    r"^\W*(?:if|once|when|whenever|after|should you)\b|\b(?:if|once|when|whenever) (?:you|this|that|it)\b",
    re.I,
)
"""A sentence the user's wish or answer governs: what it says the agent will do waits on that."""
_USER_LEAD = re.compile(r"\bLet me know\b", re.I)
""""Let me know…" asks the user; it announces nothing the agent does."""


def _final_sentences(tail_text: str, n: int = 2) -> list[str]:
    return sentences(" ".join(tail_text.split()[-60 * n // 2 :]))[-n:]


def ends_on_intention(tail_text: str) -> bool:
    """One of its last two sentences says what it is about to do ("I'm continuing now and will
    return results", then perhaps "No input is required."): the turn ended before the work did.
    Not an intention on the user's condition, nor a request to the user."""
    return any(
        (m := INTENT.search(x)) is not None
        and not _CONDITIONAL.search(x)
        and not _USER_LEAD.match(m.group(0))
        for x in _final_sentences(tail_text)
    )


_GO_AHEAD = re.compile(
    r"\bif (?:this|the|that|my) ?(?:plan|approach|design|proposal|direction|outline)? "
    r"(?:looks|sounds|seems) (?:good|right|ok(?:ay)?|fine|correct|reasonable)\b|"
    r"\bonce you(?:['’]ve| have)? (?:confirm|approve|agree|sign(?:ed)? off|give the go-ahead|pick|choose|"
    r"decide)\w*|"
    # "Tell me A–D and I'll finish it", "Let me know which one and I'll wire it up"
    r"^\W*(?:just )?(?:tell me|let me know) (?:which\b|[A-Z0-9]\s*[–-]\s*[A-Z0-9]\b|your (?:choice|pick|"
    r"preference)\b)[^.?!\n]{0,60}\b(?:and|then) I['’](?:ll|d)\b|"
    r"\bif you (?:approve|agree|confirm|give (?:me )?the go-ahead)\b|"
    r"\bwith your (?:approval|go-ahead|confirmation|permission)\b|"
    r"\b(?:awaiting|wait(?:ing)? for|need) your (?:approval|go-ahead|confirmation|sign-off|answer|"
    r"decision|choice)\b|"
    r"\b(?:want|need|would like|I['’]d like) your (?:OK|okay|go-ahead|approval|sign-off)\b|"
    r"\b(?:does|do) (?:this|the|my) (?:plan|approach|proposal|design) (?:look|sound|seem) "
    r"(?:good|right|ok(?:ay)?|reasonable)\b|\bas soon as you (?:confirm|approve|give the go-ahead)\b|"
    # the agent says it is ready and stops: "Ready to proceed with that constraint in mind."
    r"^\W*(?:I['’]m |I am |We['’]re |We are )?(?:now )?ready to (?:proceed|continue|start|begin|implement|"
    r"go ahead)\b(?![^.?!]*\bnext\b)|"
    # the agent stops until the person acts: "I'll hold here until you give the go-ahead", "I'm
    # pausing here for your OK", "The story stays in Draft until you review it", "I need someone
    # to confirm which one is current"
    r"\buntil you(?:['’]ve| have)? (?:give|gave|confirm|approve|review|decide|say|tell|reply|answer|"
    r"let me know|choose|pick|sign off|OK)\w*|"
    r"\b(?:pausing|paused|holding|stopping|stopped|waiting) (?:here |now )?(?:for|on) your "
    r"(?:OK|okay|go-ahead|approval|answer|decision|confirmation|sign-off|review)\b|"
    r"\bneed (?:you|someone|somebody|a person|a human) to (?:confirm|decide|choose|approve|sign off|tell me)\b|"
    r"^\W*(?:Please )?approve (?:it|this|the (?:plan|story|change|proposal|design))\b[^.?!\n]{0,80}\bor\b|"
    r"^\W*(?:Please )?confirm (?:that |whether |if )?I (?:should|may|can)\b|"
    r"\b(?:attendo|aspetto) (?:la tua|la sua|il tuo|il suo) (?:approvazione|conferma|via libera|ok|decisione)\b|"
    # Cline / Roo's plan mode: the plan waits for the user to let it act
    r"\b(?:toggle|switch) (?:to|into) (?:Act|Agent|Code) mode\b|"
    # the same in the languages agents answer in: fr, es, pt, de
    r"\b(?:j['’]attends|en attente de) (?:votre|ta) (?:validation|accord|approbation|feu vert|confirmation)|"
    r"\b(?:dès|après) (?:votre|ton) (?:accord|validation|feu vert)|"
    r"\b(?:espero|quedo a la espera de) (?:tu|su) (?:aprobación|confirmación|visto bueno)|"
    r"\bcon (?:tu|su) (?:aprobación|visto bueno)|"
    r"\b(?:aguardo|espero) (?:a )?(?:sua|tua) (?:aprovação|confirmação)|"
    r"\b(?:warte|warten) auf (?:deine|Ihre) (?:Freigabe|Bestätigung|Zustimmung)|"
    r"\bnach (?:deiner|Ihrer) (?:Freigabe|Bestätigung|Zustimmung)|"
    # nl, pl
    r"\b(?:graag|wacht op) (?:uw|je|jouw) (?:keuze|akkoord|bevestiging|goedkeuring)\b|"
    r"\b(?:akkoord geven|bevestig(?:en)?)\b[^.?!\n]{0,60}\b(?:of|voordat)\b|"
    r"\b(?:wymaga|czekam na) (?:Twojej|Pana|Pani|waszej) (?:zgody|akceptacji|decyzji|potwierdzenia)\b|"
    r"\bCzy mam (?:kontynuować|kontynuowac|wdrożyć|wdrozyc)\b|"
    # ja, zh, ko: no word boundaries between their characters, so none are asked for
    r"(?:この|その)(?:案|計画|方針|内容|プラン)で(?:進めて|よろしい|問題)|(?:ご?判断|ご?決定|ご?選択|ご指示)を?お願い|決めていただ[くけき]|て(?:も)?(?:よい|いい|よろしい)(?:か|ですか|でしょうか)|"
    r"ご?(?:確認|承認)(?:ください|下さい|を?お願い)|(?:OK|問題(?:が)?なければ|よろしければ)[、,][^。\n]{0,60}(?:します|進めます)|"
    r"请(?:您)?(?:确认|批准|审核)|(?:确认|同意|批准)后(?:我)?(?:再|将|会|就)|等待(?:您|你)的(?:确认|批准|同意)|"
    r"如果(?:您|你)?(?:同意|确认|没有?问题|觉得可以)[^。\n]{0,40}我(?:将|会|就|再|可以)|"
    r"如果(?:您|你)(?:已经)?有[^。\n]{0,40}(?:说一下|告诉我|发给我|提供)|"
    r"진행(?:해도 될까요|할까요|하시겠습니까)|확인(?:해 ?주세요|부탁)|승인(?:해 ?주|하시면)|"
    # "if you (kindly) provide them, I'll go on": a request whose answer the next step waits for
    r"주시면[^.\n]{0,60}(?:겠습니다|할게요|하겠어요)|(?:て|で)(?:いただければ|いただけたら|くだされば)[、,]?[^。\n]{0,60}ます",
    re.I,
)


_HALT = re.compile(r"^[^\w\n]*HALT\b(?![^\n]*(?:" + REPEATED_FAILURES + r")).*", re.M)
"""BMAD's dev agent stopping on a HALT condition for the user (not the one for repeated
failures), wherever in its last words the HALT line stands."""


def awaits_go_ahead(tail_text: str) -> str | None:
    """One of its last two sentences makes the next step wait on the user's approval ("If this
    plan looks right, I'll implement it", "I'm ready to implement these with your approval"), or
    a HALT line stops it for the user: the work waits for a yes. The sentence, or None."""
    if halt := _HALT.search(tail_text):
        return halt.group(0).strip()
    return next((x for x in _final_sentences(tail_text, 4) if _GO_AHEAD.search(x)), None)


_REMAINING = re.compile(
    r"\b(?:remaining (?:\w+ ){0,3}(?:tasks?|items?|work|steps?|phases?|todos?)|"
    r"outstanding (?:work|items|tasks)|still (?:to do|pending|to be done)|PENDING|"
    r"not (?:yet )?(?:started|implemented))\b",
    re.I,
)
_GO_ON = re.compile(
    r"\b(?:proceed|continue|go ahead|move on|start (?:on|with))\b[^.!\n]*\?|"
    r"\bready to (?:proceed|continue|move on)\b",
    re.I,
)


def asks_to_continue(tail: list[Line]) -> Line | None:
    """Its final prose names work still remaining ("Remaining Priority 2 Tasks:", "(PENDING)")
    and one of its last three lines asks whether to go on ("Would you like me to proceed with
    the remaining items?", "Ready to proceed with task 4"): the task stopped half-way and waits
    for a go-ahead. That line, or None."""
    filled = [ln for ln in tail if ln.text.strip()]
    if not _REMAINING.search("\n".join(ln.text for ln in filled)):
        return None
    return next((ln for ln in reversed(filled[-3:]) if _GO_ON.search(ln.text)), None)
