"""What a retry cannot fix, read from a failure text: a missing permission, requirements the
agent finds unclear, a design question. The brain escalates on these (seed 001's ESCALATE rules).
"""

from __future__ import annotations

import re

from orchestrator.models import Category

__all__ = [
    "ACCESS_NEEDED",
    "CLARIFICATION",
    "DESIGN",
    "ESCALATIONS",
    "PERMISSION",
    "PERSON_DECIDES",
]

_PERSON_DECIDES = (
    r"\b(?:you|someone|a\s+(?:person|human)|the\s+user|(?:the\s+)?product\s+owner|the\s+owner)\s+"
    r"(?:must|needs?\s+to|has\s+to)\s+decide\b|\bdecision\s+(?:is\s+)?(?:needed|required)\b"
)
PERSON_DECIDES = re.compile(_PERSON_DECIDES, re.I)
"""The agent names a decision as a person's ("Product owner must decide which spec governs")."""
PERMISSION = re.compile(
    r"\bEACCES\b|\bEPERM\b|\bEROFS\b|\bpermission denied\b|\boperation not permitted\b"
    r"|\bPermissionError\b|\baccess (?:is )?denied\b|\bread-only file ?system\b"
    r"|\bInteractive authentication required\b",
    re.I,
)
CLARIFICATION = re.compile(
    # not a possibility a tool lists ("PROMPT.md may need clarification")
    r"(?<!\bmay )(?<!\bmight )(?<!\bcould )\bneeds?\s+(?:human\s+)?(?:input|clarification|guidance"
    r"|a\s+decision)\b|\bI\s+need\s+(?:clarification|more\s+(?:information|context|details))\b"
    r"|\bneeds?\s+an?\s+(?:human|person(?:'s)?|manual)\s+(?:decision|input|choice)\b"
    # de, fr, es, pt: "I need a decision", "someone has to decide", "I don't know which"
    r"|\bj['’]ai besoin d['’]une décision\b|\bnecesito (?:que alguien (?:decida|confirme)|una decisión)\b"
    r"|\bpreciso (?:que alguém (?:decida|confirme|escolha)|de (?:uma decisão|confirmação))\b"
    r"|\bbrauche (?:eine|deine|Ihre) Entscheidung\b|\bDesignentscheidung\b"
    r"|\bje ne sais pas (?:quel(?:le)?s?|si|comment)\b|\bno sé (?:cuál|si|qué)\b|\bnão sei (?:qual|se)\b"
    r"|\bich weiß nicht,? (?:ob|welche[rsn]?)\b"
    r"|\b(?:unclear|ambiguous|underspecified|vague)\s+(?:requirements?|spec(?:ification)?s?"
    r"|instructions?|task)\b"
    r"|\brequirements?\s+(?:are|is)\s+(?:unclear|ambiguous|underspecified|vague)\b"
    r"|\bplease\s+clarify\b|\bclarification\s+(?:is\s+)?(?:needed|required)\b"
    r"|\b(?:I'?m|I\s+am)\s+(?:confused|unsure|not\s+sure)\s+(?:about|what|which|how|whether)\b"
    r"|\bcannot\s+proceed\s+without\b|\bNEEDS_HUMAN\b|\bSTATUS:\s*needs_human\b"
    r"|\bwhich\s+(?:option|approach)\s+(?:do|would)\s+you\s+(?:prefer|like)\b"
    r"|" + _PERSON_DECIDES,
    re.I,
)
ACCESS_NEEDED = re.compile(
    r"\b(?:needs?|requires?) someone (?:with|who has) (?:[\w-]+ ){0,4}(?:access|permissions?|rights)\b"
    r"|\b(?:someone|somebody|an?\s+(?:[\w-]+\s+){0,2}(?:admin\w*|owner|maintainer))"
    r"(?:\s+(?:with|who has|on|of|in|for)\s[^.]{0,60}?)?\s+(?:must|needs?\s+to|has\s+to|will\s+have\s+to)"
    r"\s+(?:request|grant|renew|rotate|issue|provide|extend|enable|reactivate|re-?enable|add|give|"
    r"share|sign\s+in|log\s?in|invite|create\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:token|key|account|"
    r"secret))\b"
    r"|\bonly (?:someone|a person|an admin\w*) with (?:[\w-]+ ){0,3}access\b"
    # "I can't run the required check until an org admin raises the limit"
    r"|\buntil (?:someone|somebody|an?\s+(?:[\w-]+\s+){0,2}(?:admin\w*|owner|maintainer))\s+"
    r"(?:raises?|increases?|grants?|enables?|renews?|rotates?|adds?|gives?|shares?|approves?|lifts?|"
    r"tops? up)\b"
    # "I can't open the PR without push rights", "cannot deploy without write access"
    r"|\b(?:can['’]?t|cannot|unable to)\b[^.\n]{0,60}\bwithout (?:[\w-]+ ){0,2}"
    r"(?:rights|access|permissions?)\b"
    # es, it, pt, fr, de: "someone with the Owner role has to grant …", "someone must log in"
    r"|\b(?:que|serve che|preciso que|il faut que|muss) (?:alguien|qualcuno|alguém|quelqu'un|jemand)"
    r"\b[^.\n]{0,60}?\b(?:conceda|otorgue|haga|faccia|faça|accorde|fasse|"
    r"gewährt|erteilt|anmeldet|einloggt)\b",
    re.I,
)
"""The agent names access only a person holds ("this needs someone with IAM admin access",
"someone needs to request access for the token's account")."""
DESIGN = re.compile(
    r"\barchitectur(?:e|al)\s+(?:issue|problem|flaw|change|decision|question|concern"
    r"|limitation|rework)s?\b"
    r"|\b(?:requires?|needs?|calls?\s+for)\s+(?:an?\s+)?(?:architectural|design|structural)"
    r"\s+(?:change|decision|rework)s?\b"
    r"|\bdesign\s+(?:issue|problem|flaw|decision|question)s?\b"
    r"|\b(?:current|existing)\s+(?:architecture|design)\s+(?:does\s*n[o']t|cannot|can'?t|won'?t)\b"
    r"|\bconflicting\s+(?:requirements?|constraints?|acceptance\s+criteria)\b"
    r"|\brequirements?\s+(?:conflict|contradict)"
    r"|\b(?:contradictory|mutually\s+exclusive|incompatible)\s+(?:requirements?|constraints?"
    r"|criteria)\b"
    r"|\b(?:requirements?|criteria|constraints?)\s+(?:are|is)\s+(?:contradictory|conflicting"
    r"|mutually\s+exclusive|impossible|incompatible)\b"
    r"|\bimpossible\s+(?:task|requirements?)\b|\b(?:task|this)\s+is\s+impossible\b"
    r"|\bimpossible\s+to\s+satisfy\b|\bcannot\s+(?:all\s+|both\s+)?be\s+satisfied\b"
    r"|\b(?:must|needs?\s+to|has\s+to|would\s+have\s+to)\s+be\s+(?:restructured|redesigned"
    r"|re-?architected)\b"
    r"|\bcircular\s+(?:import|dependenc(?:y|ies))\b.{0,160}?\b(?:restructur|redesign"
    r"|re-?architect|architectur)",
    re.I | re.S,
)


ESCALATIONS: tuple[tuple[re.Pattern[str], str, Category | None], ...] = (
    (
        PERMISSION,
        "The agent lacks a permission (files, system or credentials) it cannot grant itself",
        None,
    ),
    (
        ACCESS_NEEDED,
        "The agent needs access only a person holds: a permission, an account or a credential",
        "external_service",
    ),
    (
        CLARIFICATION,
        "The agent needs clarification: the requirements are unclear to it",
        "ambiguous_requirements",
    ),
    (
        DESIGN,
        "A design/architecture problem, not a coding bug: a person has to decide",
        "ambiguous_requirements",
    ),
)

"""(pattern, why a person is needed, the seed-004 category when one applies), in this order."""
