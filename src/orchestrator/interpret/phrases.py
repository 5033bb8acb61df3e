"""The phrase tables the heuristics weigh (`heuristics.py`): what finished work, failure, an
offer, a blocking question and uncertainty sound like in an agent's own words, and what a test or
build result looks like in tool output. Kept apart so the reading logic stays readable."""

from __future__ import annotations

import re

_W = list[tuple[re.Pattern[str], int]]

_DONE_VERBS = (
    r"implemented|added|created|updated|fixed|refactored|written|wrote|completed|finished|built|set up|"
    r"configured|migrated|replaced|renamed|moved|extracted|introduced|converted|upgraded|switched|resolved|"
    r"enabled|removed|rebased|squashed|merged|split|documented|verified|rewritten|ported|generated|"
    r"bumped|cleaned up|wired|deleted|reworked|adjusted|normali[sz]ed|linked|exposed|restructured|"
    r"simplified|hooked up|registered|installed|ran(?! out)|re-ran|tested"
)
COMPLETION: _W = [
    (
        re.compile(
            rf"\b(?:I'?ve|I have|I)\s+(?:now\s+|also\s+|successfully\s+|just\s+)?(?:{_DONE_VERBS})\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:all|the)\s+(?:\d[\d,]*\s+)?(?:unit\s+|integration\s+|e2e\s+|\w+\s+)?(?:tests?|specs?|checks?|suites?)\s+"
            r"(?:now\s+|still\s+)?(?:pass|passed|passing|are passing|are green|succeed|passes)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            # not a prediction ("your test should now pass", "the build will succeed")
            r"\b(?:tests?|suite|build|lint|typecheck|mypy|ruff|CI)\b"
            r"(?:(?!\b(?:should|will|would|might|may|could|to)\b)[^.\n]){0,30}\b(?:pass(?:es|ed)?|green|is clean|succeeds|"
            r"succeeded|no (?:new )?(?:errors|problems|issues|warnings))\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b\d[\d,]*\s+(?:tests?\s+)?(?:passed|passing|examples?, 0 failures)\b(?![^\n]*\b[1-9]\d*\s+(?:failed|errors?|failing)\b)",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"(?:^|\n)\s*(?:[✅✓]\s*)?(?:All\s+)?(?:Done|Fertig|Erledigt|Finished|Complete)\b\s*[.!:—–-]",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:is|are)\s+(?:now\s+)?(?:(?!partially\b|partly\b|only\b|barely\b|hardly\b|likely\b)[a-z]+ly\s+)?"
            r"(?:complete|done|implemented|fixed|in place|working|supported|green|idempotent|met|written|"
            r"tested|merged|deployed|added|wired up)\b",
            re.I,
        ),
        2,
    ),
    (re.compile(r"\ball\s+(?:passing|pass|green)\b", re.I), 2),
    (
        re.compile(
            r"\b(?:task|criteria|acceptance criteria)\b[^.\n]{0,40}\b(?:complete|met|done)\b", re.I
        ),
        2,
    ),
    (re.compile(r"[✅✓]"), 1),
    (
        re.compile(
            r"\b(?:all green|everything (?:passes|is green|works)|all (?:checks|tests) green)\b|"
            r"\bTests?:\s*(\d+)/\1\b",
            re.I,
        ),
        3,
    ),
    (re.compile(rf"(?:^|\n)\s*(?:[-*]\s+)?(?:{_DONE_VERBS})\b", re.I), 1),
    (
        re.compile(
            r"\b(?:now\s+)?(?:succeeds|succeeded|successfully|works end to end|now works|works now)\b",
            re.I,
        ),
        1,
    ),
    (
        re.compile(
            r"^\s*+#*\s*\**(?:Summary|Changes(?: made)?|What (?:I )?changed|What I did|Zusammenfassung|Änderungen|"
            r"Was ich gemacht habe)\**\s*:?\s*$",
            re.I | re.M,
        ),
        1,
    ),
    (
        re.compile(
            r"\bno (?:code |further )?changes (?:are |were )?(?:needed|necessary|required)\b", re.I
        ),
        3,
    ),
    (
        re.compile(
            r"\bIch habe\b[^.\n]{0,80}\b(?:implementiert|umgesetzt|hinzugefügt|erstellt|angepasst|behoben|aktualisiert|"
            r"ergänzt|geschrieben|eingebaut|refaktoriert|entfernt|erweitert)\b",
            re.I,
        ),
        2,
    ),
    (
        # the same claim in es, pt, fr: "He añadido…", "Adicionei…", "J'ai corrigé…"
        re.compile(
            r"\b(?:He|Hemos)\s+(?:añadido|agregado|creado|actualizado|corregido|implementado|"
            r"modificado|arreglado|cambiado|eliminado|configurado|escrito)\b|"
            r"\b(?:Adicionei|Criei|Atualizei|Corrigi|Implementei|Modifiquei|Alterei|Removi|"
            r"Configurei|Escrevi)\b|"
            r"\bJ['’]ai\s+(?:ajouté|créé|mis à jour|corrigé|implémenté|modifié|supprimé|configuré|"
            r"écrit|remplacé)",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:alle|die)\s+(?:\d+\s+)?Tests?\b[^.\n]{0,30}\b(?:grün|bestanden|durch|erfolgreich)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:ist|sind)\s+(?:jetzt\s+|nun\s+)?(?:(?!nicht\b|noch\b|kein\w*\b)[\w-]+\s+)?"
            r"(?:behoben|umgesetzt|implementiert|fertig|erledigt)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:jetzt|nun)\b[^.\n]{0,60}\b(?:umgesetzt|implementiert|verarbeitet|unterstützt)\b",
            re.I,
        ),
        1,
    ),
    (
        re.compile(
            r"\b(?:Tests?|Build)\b[^.\n]{0,30}\b(?:laufen|läuft|sind|ist)\s+(?:alle\s+)?(?:durch|grün|erfolgreich)\b|"
            r"(?:^|\n)\s*(?:Umgesetzt|Implementiert|Erledigt)\b",
            re.I,
        ),
        2,
    ),
]
ERRORS_LEFT = re.compile(
    r"\b(?:errors?|failures?|warnings?|issues?|problems?)\b[^.\n]{0,40}?\b(?:are|is) still "
    r"(?:open|there|present|outstanding|unresolved|unfixed)\b|"
    r"\bstill (?:need|needs|require|requires) (?:fixing|to be fixed|a fix)\b|"
    r"\b(?:gate|CI|check|pipeline)\b[^.\n]{0,30}\bwill (?:reject|fail on|block)\b|"
    r"\b(?:remaining|outstanding|unresolved|unfixed) (?:type |lint |compile |build |test )?"
    r"(?:errors?|failures?)\b|"
    r"\bstill (?:reports?|shows?|gives?|throws?|has|have|flags?) [1-9]\d* (?:\w+ )?(?:errors?|failures?)\b",
    re.I,
)
"""Errors the agent leaves and says so: "These still need fixing", "The lint and type errors are
still open", "The strict mypy gate in CI will reject these". In its last paragraph this outranks
what it claimed before."""

FAILURE: _W = [
    (
        re.compile(
            r"\b(?:I|we)\s+(?:was|were)(?:n't| not)\s+able\s+to\b|\bI\s+(?:could(?:n't| not)|can(?:no|')t|was unable to|am unable to|"
            r"failed to|did(?:n't| not) manage to)\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\bunable to\b|\bnot able to\b", re.I), 2),
    # "… but couldn't get the build to pass", "never managed to make it work"
    (
        re.compile(
            r"\b(?:could(?:n't| not)|did(?:n't| not) manage to|never managed to|failed to)\s+(?:get|make)\b"
            r"[^.\n]{0,40}?\b(?:to\s+)?(?:pass|work|build|compile|run|green|succeed)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:still|keeps?|continues? to)\s+(?:fail|failing|fails|crash|crashes|times? out|breaks|broken|red)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:tests?|build|suite|run|lint|check|image|migration|server|script|test run|pipeline|process)\b[^.\n]{0,30}"
            r"\b(?:fails?|failing|failed|crash(?:es|ed)?|broken|breaks|segfaults|times out|timed out|was killed)\b",
            re.I,
        ),
        2,
    ),
    # a loop runner's own log of the agent's call: "Claude Code execution timed out after 15 minutes"
    (
        re.compile(
            r"\b(?:execution|command|job|call)\b[^.\n]{0,30}\b(?:timed out|was killed)\b", re.I
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:not|isn't|is not|aren't|are not|wasn't)\s+(?:yet\s+)?(?:done|fixed|finished|complete|completed|working|resolved|"
            r"implemented|verified)\b|\bNot fixed\b|\bnot done\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bran out of (?:time|turns|context|budget)\b|\bhit the (?:turn|context) limit\b|\bmax(?:imum)? turns\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:the )?task (?:has )?(?:failed|cannot be completed|can't be completed|could not be completed)\b|"
            r"\bcannot be completed\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\b(?:I'm|I am) stuck\b|\bI (?:gave up|give up|am giving up)\b", re.I), 3),
    # a process the run depended on killed or exiting non-zero, as a loop runner logs it
    (
        re.compile(
            r"\bexited with (?:exit )?(?:code|status) (?:[1-9]\d*)\b|\bKilled\s+timeout\b|"
            r"^[^\w\n]*(?:\[\w+\][^\S\n]*)?exit status [1-9]\d*\b|\bwall-clock limit\b[^.\n]{0,30}\breached\b",
            re.I | re.M,
        ),
        2,
    ),
    # an edit that never reached the file: "the patch did not apply", a tool's "old_string was
    # not found" / "String to replace not found"
    (
        re.compile(
            r"\b(?:patch|edit|diff|change|replacement)(?:es|s)? (?:did(?:n't| not)|could(?:n't| not)|"
            r"failed to) (?:apply|be applied|match)\b|\bold_string was not found\b|"
            r"\bString to replace not found\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\b(?:was|were|has been|have been) unsuccessful\b", re.I), 3),
    (
        re.compile(
            r"\b(?:tool call|request|command|operation) (?:was )?(?:cancell?ed|blocked|rejected|denied)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:can(?:no|')t|couldn't|could not|unable to)\s+(?:reach|connect|access|fetch|install|resolve|"
            r"load|import|start|build|compile)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:doesn't|does not|won't|didn't|did not) (?:work|start|compile|build|run|pass|load)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bhaven't (?:yet )?(?:fixed|resolved|found|confirmed|finished|got|gotten|managed)\b|\bhaven't been able\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:I've |I have |I )reverted\b|\bmade things worse\b|\bno verified fix\b|\bpartial progress\b|"
            r"\buntested\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bnone of (?:them|these|those|the \w+)\b[^.\n]{0,40}\b(?:work\w*|pass\w*|help\w*|fix\w*)|"
            r"\bstill\b[^.\n]{0,20}\bfailures?\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\bI (?:encountered|ran into|hit|got) (?:an? |the same |another )?(?:error|problem|issue|exception)\b|"
            r"\b(?:was|were)(?:n't| not) (?:applied|saved|written|committed|created)\b",
            re.I,
        ),
        2,
    ),
    (ERRORS_LEFT, 3),
    (
        # "Neither the status update nor the task is done."
        re.compile(
            r"\bneither\b[^.\n]{0,80}\bnor\b[^.\n]{0,60}\b(?:is|are|was|were|has been|have been) "
            r"(?:done|complete|completed|finished|working|fixed|saved|applied)\b",
            re.I,
        ),
        4,
    ),
    (re.compile(r"\bmutually exclusive\b|\bcontradict\w*\b|\bimpossible\b", re.I), 1),
    (
        re.compile(
            r"\bkonnte\b[^.\n]{0,60}\bnicht\b|\bnicht\s+(?:fertig|gelöst|behoben|möglich|abgeschlossen|lösen|beheben|"
            r"erledigt|umgesetzt|implementiert)\b|\bkeine\s+(?:\w+\s+)?Lösung\b|\bstürzt\b[^.\n]{0,60}\bab\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\bschl(?:ä|a)gt\s+(?:\w+\s+){0,2}fehl\b|\bschlagen\s+(?:\w+\s+){0,2}fehl\b|\bfehlgeschlagen\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\bleider\b", re.I), 1),
    (
        # a prediction instead of a result: the fix was not run ("should hopefully resolve it")
        re.compile(
            r"\b(?:should|will)\s+(?:now\s+)?(?:hopefully\s+)?(?:work|fix|resolve|eliminate|solve)\b|"
            r"\bhopefully\b",
            re.I,
        ),
        1,
    ),
]
_CANT_MYSELF = r"\bI can(?:no|')t (?:produce|provide|get|obtain|create) (?:\w+ )?myself\b"
"""What only the user can supply ("Two things I can't produce myself:"): a request, not a failure."""
NOT_FAILURE = re.compile(
    r"\b(?:no|0|zero)\s+(?:failures|failed|errors)\b|\bwithout (?:errors|failures)\b|\bfixed the failing\b|"
    r"\bno longer (?:fails|crashes|breaks)\b|" + _CANT_MYSELF,
    re.I,
)

CAVEAT = re.compile(
    r"^\s*(?:[-*]\s+)?\**(?:Note|NB|Caveat|Hinweis|Anmerkung)\**\s*:.*$", re.I | re.M
)
"""A caveat after finished work ("Note: I couldn't run the e2e suite here") is not the verdict."""

WHICH_WORDS = r"cuál|qual|quale|quel(?:le)?s?|lequel|laquelle|welk(?:e)?|który|która|które"
""""Which" in es/pt/fr/it/nl/pl: a question that names it asks to choose."""
_RESULT_OK = re.compile(
    r"\b\d[\d,]*\s+(?:passed|passing)\b(?!.*\b[1-9]\d*\s+(?:failed|errors?|failing)\b)|\btest result: ok\b|"
    r"\b\d+ examples?, 0 failures\b|\bTests:\s+\d+ passed, \d+ total\b|\bsucceeded in\b|\bSuccessfully built\b|"
    r"\bcompiled successfully\b|\bexited 0\b|^Applied edit to\b|^Commit [0-9a-f]{7}\b|^[\s│|⎿]*ok\s+\S+\s+[\d.]+s|"
    r"\bFound 0 errors\b|\bAll checks passed\b|\bBuild succeeded\b|\bBUILD SUCCESS(?:FUL)?\b|^\s*│?\s*✓|\b0 failures\b|\b0 failed\b|"
    r"\bSuccess\. Updated the following files\b",
    re.I,
)
FIX_CLAIMED = re.compile(
    r"\b(?:re-?ran|re-?run|rerunning)\b|^\W*Fixed\b|\b(?:earlier|previous|first|initial) (?:failures?|errors?|run)\b|"
    # or says what the failure is and why it is not this work's: pre-existing, unrelated, out of scope
    r"\bpre-?existing\b|\bunrelated to (?:my|this|the|these) (?:change|work|task|edit)s?\b|"
    r"\bnot (?:caused|introduced) by (?:my|this|the|these)\b|\bwas already failing\b|"
    r"\bthe only (?:lint |test |remaining )?(?:finding|failure|warning|error)s? (?:is|are) in\b|"
    r"\bfixed (?:the|that|this|these|those|it|them|both|all)\b[^.\n]{0,40}\b(?:fail\w*|errors?|tests?|lint\w*)\b",
    re.I | re.M,
)
"""The agent's last words say it fixed a failure and ran again, or explain the failure as not this
work's (pre-existing, unrelated): a red run printed before them is history it answered, not the
verdict (what it says is checked by nothing but the gates)."""
RESULT_LINE_OK = re.compile(
    r"^[\s│|⎿]*(?:test result: ok\.|ok\s+\S+\s+[\d.]+s\b|Tests:\s+\d+ passed, \d+ total\b|"
    r"=+ \d+ passed(?:, \d+ (?:skipped|warnings?|xfailed|deselected))* in [\d.]+s|"
    r"Finished `\w+` profile\b)",
)
"""A test or build runner's own success line, in whatever zone a log's layout put it: a line that
only a tool prints, never a sentence of the agent's."""
RESULT_LINE_FAIL = re.compile(
    r"^[\s│|⎿]*(?:The LLM did not conform to the edit format\b|apply_patch verification failed\b|"
    r"\d+ SEARCH/REPLACE blocks? failed to match\b|no tests ran in [\d.]+s\b|collected 0 items\b|"
    r"Only \d+ reflections allowed, stopping\b|"
    # a runner's bare summary of a red run: Playwright's `2 failed`, tsc's `Found 3 errors in 3
    # files.` (behind pnpm's `packages/app typecheck:`), pnpm's `Exit status 2`
    r"[1-9]\d* failed\s*$|(?:[\w@/.-]+(?: [\w-]+)?: )?Found [1-9]\d* errors? in \d+ files?\.|"
    r"Exit status [1-9]\d*\s*$|ERR_PNPM_\w+)",
)
"""An agent tool's own report that the work did not land (Aider's edit-format refusal, Codex's
patch that did not apply, a test run that found nothing to run), in whatever zone it stands."""
_RESULT_FAIL = re.compile(
    r"\b[1-9]\d*\s+(?:tests?\s+)?(?:failed|failing|errors?)\b|\*\*\*Failed\b|^\s*FAILED\b(?!:\s*0\b)|^\s*ERROR\b|^E\s+\w*(?:Error|Exception)\b|^\s*FAIL\b|^--- FAIL|Traceback \(most recent call last\)|"
    r"^\s*[\w.]*(?:Error|Exception)(?:\s*\[[\w-]+\])?:\s|^\s*│?\s*[\w.]*(?:Error|Exception):|\berror(?:\[E\d+\])?:|\berror TS\d+|"
    r"\bexited [1-9]\d*\b|\bexit(?:ed)? (?:with )?(?:code|status):? [1-9]\d*|npm ERR!|ELIFECYCLE|\bCommand failed\b|"
    r"^\s*Killed\s*$|Segmentation fault|could not compile|BUILD FAILED|Command timed out|✗|SearchReplaceNoExactMatch|"
    r"failed to match|A potential loop was detected|\bFound [1-9]\d* errors?\b|✖ \d+ problems|\bFatal\b|panicked at|"
    r"\berror during build\b|\bfailed to solve\b|"
    # Maven's and an edit tool's own failure lines: `[ERROR] …`, `BUILD FAILURE`, `Failed to edit`
    r"^[\s│|⎿]*\[ERROR\]|\bBUILD FAILURE\b|\bCOMPILATION ERROR\b|^[\s│|⎿]*Failed to edit\b|\bNo edits made\b|"
    # Go's compiler: `internal/feeds/atom.go:57:14: undefined: parseRFC3339Loose`
    r"^[\s│|]*[\w./-]+\.go:\d+:\d+: |"
    # Aider's report of lint or test errors left after an edit
    r"^#+ Fix any errors below\b|^#+ See relevant lines? below marked with █",
    re.I | re.M,
)

REPEATED_FAILURES = (
    r"\b(?:attempts?|failures?|failed|fails|falhas?|fallos?|fallid\w*|échecs?|échoué\w*|"
    r"Fehlschl\w+|fehlgeschlagen|Versuche|tentativ\w+|intentos|fallit\w*)\b|失败|失敗|실패"
)
"""Words of a HALT line for repeated failures (BMAD's "HALT: 3 falhas consecutivas"), in the
languages agents answer in: that HALT is a failed attempt, not a question for the user."""

_OFFER_LEAD = re.compile(
    r"\b(?:would you like|do you want me|want me to|shall I|should I|can I|may I|I can(?!['’]t|not)|"
    r"I could(?!n['’]t| not)|happy to|"
    r"möchtest du|willst du|soll ich|let me know if|if you(?:'d| would)? like|if you want|"
    r"what would you like(?: me)? to (?:do|tackle|work on|focus on)|anything else|sag Bescheid|"
    r"is there anything|gibt es noch (?:etwas|was)|noch etwas|"
    # the same offers in the other languages agents answer in: es, pt, fr, it
    r"(?:quieres|te gustaría|desea|deseas) que|si (?:quieres|lo deseas)|algo más|alguna otra cosa|"
    r"(?:quer|gostaria|deseja) que eu|se (?:quiser|preferir)|mais alguma coisa|algo mais|"
    r"(?:voulez|souhaitez)-vous que je|si vous (?:voulez|le souhaitez)|autre chose|"
    r"vuoi che|qualcos['’]altro|altro da fare)\b",
    re.I,
)
_EXTENSION = re.compile(
    r"\b(?:also|too|as well|additionally|additional|any adjustments?|any changes|next|further|more|another|"
    r"other|extra|follow[- ]?ups?|anything else|"
    r"in addition|noch|auch|zusätzlich|weitere[nrs]?|try (?:again|a different|another|something else)|"
    r"different approach|something else|same option|same thing|algo más|alguna otra cosa|"
    r"mais alguma coisa|algo mais|autre chose|qualcos['’]altro)\b",
    re.I,
)
_REPORT_BACK = (
    r"\b(?:let me know|tell me)\s+(?:when|once)\b[^.?!\n]{0,100}?\b(?:is|are|has been|have been)\s+"
    r"(?:complete|completed|done|finished|applied|in place|set up|configured)\b"
)
"""The user does a step and reports back ("Let me know when the migrations are complete"): the
agent's next step waits for it."""
OFFERED_CHOICE = re.compile(
    # no bracket between: each "(a)" scans only to the next one (many of them stay linear)
    r"\((?:a|1|i)\)[^()?\n]{1,300}?\bor\s+\((?:b|2|ii)\)|"
    r"\b(?:you|we) (?:could|can|may|might) either\b|"
    r"\b(?:you|we) have (?:two|three|four|a few|several) (?:options|choices)\b|\bthe options are\b|"
    r"\bthere are (?:two|three|four|a few|several) (?:options|ways)\b|"
    # one of several numbered solutions recommended: the others are still on the table
    r"\b(?:recommend\w*|suggest\w*|start with|go with)\b[^.?!\n]{0,60}?(?:\b(?:solutions?|options?|"
    r"approach(?:es)?|fix(?:es)?)\W{0,3}#?\d|\(\d\)|\b(?:option|approach|solution)\W{0,3}[A-D]\b)",
    re.I,
)
"""Options laid out for the user without a question mark: "Let me know if you'd like me to (a)
run the refinement now, or (b) commit first", "To fix the table you could either: 1. … 2. …"."""
_CONDITIONAL_REQUEST = (
    r"\bif you (?:can |could )?(?:provide|share|send|paste|post|upload|attach)\b[^.?!\n]{0,150}?"
    r"\b(?:I|we)(?:['’]ll| will| can| could)\b"
)
"""Information only the user has, asked for as the condition of the next step ("If you can
provide a sample of the timestamps, I can write a more precise fix"): a request, not an offer."""
_BLOCKING = re.compile(
    r"\b(?:before I (?:proceed|continue|start|go ahead|make|change|begin|implement|wire|write)|bevor ich|"
    r"haven't (?:changed|modified|made|implemented|touched|started)|I have not (?:changed|modified|made|implemented)|"
    r"noch nicht (?:geändert|umgesetzt|übernommen|angefangen)|(?:I've|I have) (?:paused|stopped) (?:here|before|until)|"
    r"I['’]m (?:holding|pausing) (?:here|off|now|before)|I am (?:holding|pausing) (?:here|off|now|before)|\bje ne (?:passe|continue) pas\b[^.\n]{0,60}\bavant votre\b|"
    r"so I(?:'ve| have) (?:paused|stopped)|requires? (?:a )?human sign-?off|waiting for your (?:go|approval|confirmation)|"
    r"so (?:that )?I can (?:proceed|continue|start|suggest|make|apply|implement|fix|propose|edit)|"
    r"ready for your (?:review|approval|go-?ahead|sign-?off)|once you(?:'ve)? (?:add|share|provide|confirm|approve|put|set|place|configure)\w*|"
    r"(?:awaiting|waiting for|wait for) your (?:direction|input|decision|instructions?|answer|reply|response|choices?|"
    r"go-?ahead|confirmation|approval)|questions? (?:are |is )?blocking|if you say [\"“]?go|just (?:a |say )?[\"“]go\b|"
    r"once you(?:'ve| have)?\b[^.?!\n]{0,150}\b(?:let me know|tell me)\b)\b|"
    # an imperative to the user with the agent's next step hanging on the answer:
    # "Please confirm and I'll provide those", "Tell me your choices … and I'll wire it"
    r"(?:\bplease (?:confirm|approve|advise|decide|choose|pick|specify)|(?:^|[.!?:]\s+|\n\s*)(?:Tell me|Confirm|Decide|"
    r"Choose|Pick)\b|\blet me know (?:which|whether|how|what|your))[^.?!\n]{0,120}?\b(?:and|then|so)\s+"
    r"I(?:'ll|’ll| will| can| run| start| go| proceed)\b|" + _REPORT_BACK,
    re.I,
)
_DECISION = re.compile(
    r"\b(?:which|what should|what do you want|what would you prefer|how should|how would you like|whether|prefer|choose|"
    r"pick|decide|decision|confirm|approve|approval|clarify|welche[nrsm]?|wie möchtest|wie soll|bevorzugst|"
    r"entscheide|bestätig\w*|freigabe|freigeben|darf ich|ok to|okay to|is it ok|go ahead|proceed|select|"
    r"intended|correct|right one|is right|should it be|should (?:the|it|they|this|we)|what should|"
    r"what (?:\w+ ){1,3}would you like(?! me))\b",
    re.I,
)
_ALTERNATIVES = re.compile(
    r"^(?=.*\b(?:should|shall|do you|would you|could you|soll|sollen|möchtest|willst|want)\b)"
    r"(?=.*\b(?:or|oder)\b).*\?\s*$",
    re.I,
)
_HUMAN_ACTION = re.compile(
    r"\b(?:could|can|would) you (?:please )?(?:provide|put|add|give|create|set|check|renew|regenerate|confirm|"
    r"clarify|tell|share|send|update|run|look|verify|approve)\b|\bplease (?:provide|confirm|advise|choose|decide|"
    r"tell me|let me know (?:which|whether|how|what)|clarify|specify|approve|select|pick)\b|"
    r"\blet me know (?:which|whether|how|what)\b|\btell me which (?:option|approach|one|way|variant)\b|"
    r"\bI need (?:you|your|a decision|an answer)\b|\bneed your (?:approval|decision|input)\b|"
    # what only the user has or can do: "I need things only you can provide:", "I need a person
    # at the kiosk to: …"
    r"\bI need (?:[\w-]+ ){0,4}?(?:only you|from you)\b|\bI need (?:a person|someone|somebody|a human)\b|"
    r"^\W*(?:Needed|Required|What I need) from you\b|" + _CANT_MYSELF + r"|"
    r"\bwaiting for your\b|\bawaiting your\b|\bkannst du\b|\bbitte (?:bestätige|entscheide|gib)\b|^Select:|"
    r"\breply\b[^.\n]{0,20}\bto (?:continue|proceed|confirm)|\bI need a decision\b|"
    r"\bplease (?:add|paste|share|upload|send|check your|run this on your)\b|\bready for your (?:review|approval)\b|"
    # the user is to run something and report back what it printed
    r"\bplease (?:run|execute|try|open|check|test|print|verify|compare|look at|install)\b[^?!\n]{0,160}?"
    r"\band (?:share|send|paste|post|report|tell me|let me know)\b|"
    # the reply the agent waits for, named: 'Reply "ship it" when you want me to deploy'
    r"\breply\b[^.\n]{0,30}\bwhen you (?:want|are ready|'re ready)\b|"
    r"\bmerci de (?:me dire|confirmer|valider|m['’]indiquer)\b|\bet de me dire\b|"
    r"^\W*(?:Tell me|Confirm|Decide|Choose|Pick|Select) (?:your|which|whether|how|what|one|between)\b|"
    r"\bquestions? (?:are |is )?blocking\b|\bif you say [\"“]?go\b|\bjust (?:a |say )?[\"“]go\b|"
    # the same requests in es, pt, fr, it, de: "Preciso que você rode isto…", "Pouvez-vous … me dire"
    r"\b(?:preciso|necessito) que (?:você|vc|tu)\b|\bnecesito que (?:tú |usted )?\w|"
    r"\bj['’]ai besoin que (?:vous|tu)\b|"
    # "could you <verb>": the polite conditional, or a verb with "me" attached ("Potresti
    # esportare…", "Pouvez-vous installer…", "¿Puedes pasarme…"); the bare present ("puoi usare",
    # "você pode usar") is advice
    r"\b(?:pouvez|pourriez)-vous\s+(?:me\s+|m['’])?\w+(?:er|ir|re)\b|"
    r"\bpodrías\s+\w+(?:ar|er|ir)(?:me|nos|lo|la|los|las)?\b|\b(?:puedes|puede|podría)\s+(?:usted\s+)?\w+(?:ar|er|ir)me\b|"
    r"\b(?:você |vc )?poderia\s+(?:me\s+)?\w+(?:ar|er|ir)\b|\b(?:pode|podes) me\s+\w+(?:ar|er|ir)\b|"
    r"\bpotresti\s+\w+(?:are|ere|ire)(?:mi|ci|lo|la|li|le)?\b|\b(?:puoi|può|potrebbe)\s+\w+(?:are|ere|ire)mi\b|"
    r"\b(?:könnten|können) Sie (?:mir )?\w|"
    r"\bonce you(?:'ve| have)?\b[^.?!\n]{0,150}\b(?:let me know|tell me)\b|"
    # a question about what only the user sees or has: "What error are you getting when you run it?"
    r"\b(?:what|which|where|how)\b[^?.!\n]{0,50}\b(?:are|do|did|were) you (?:getting|seeing|get|see|"
    r"using|running|observ\w+|expect\w*)\b[^.!\n]*\?|" + _CONDITIONAL_REQUEST + "|" + _REPORT_BACK,
    re.I,
)
UNCERTAIN = re.compile(
    r"\bI'?m not sure (?:whether|if|which|how|what)\b|\bI'?m uncertain\b|\bcould go either way\b|"
    r"\bunclear (?:whether|which|what|how)\b|\bit(?:'s| is) (?:unclear|ambiguous)\b|\b(?:doesn't|does not|don't) specify\b|"
    r"\bnot specified\b|\bambiguous\b|\bUnklar ist\b|\bnicht eindeutig\b|\blässt offen\b|\bconflict with\b|"
    r"\btwo (?:reasonable )?(?:interpretations|readings)\b|\bboth (?:patterns|approaches) exist\b|"
    r"\b(?:doesn't|does not|don't) say\b|\bno mention of\b|\b(?:isn't|is not|aren't|are not) (?:specified|defined)\b|"
    r"\bunspecified\b|\bthere (?:is|are) no (?:spec|style guide|specification|definition|requirements?|palette)\b|"
    r"\bnennt kein\w*\b",
    re.I,
)
