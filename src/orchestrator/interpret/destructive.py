"""Extreme destructive steps (seed 004) that an agent proposes, intends or asks to run in its text.

Which command or statement destroys data is decided by `orchestrator.rules.destructive` (the same
rules hold a tool call before it runs, in `orchestrator.policy`); this module finds the commands in
prose, fences and tool output and tells a proposal from a mention, a refusal or file content
(`find_destructive_proposal`).
"""

from __future__ import annotations

import re

from orchestrator.interpret.text import SHELL_LANGS, SQL_LANGS, Line, LineFinder, sentences
from orchestrator.models import Category
from orchestrator.rules.destructive import destructive_statement, extreme_destructive

# --------------------------------------------------------------------------- shell commands
# The verdict on one command or statement is `orchestrator.rules.destructive`'s (shared with the
# policy that holds tool calls); this module only finds the commands an agent writes and judges its intent.


def destructive_sql(text: str) -> str | None:
    """The first statement in TEXT that drops or empties a table, schema or database."""
    return destructive_statement(text)


def destructive_command(cmd: str) -> str | None:
    """The extreme destructive part of a shell command line, or None.

    >>> destructive_command("cd api && npx prisma migrate reset --force")
    'npx prisma migrate reset --force'
    >>> destructive_command("rm -rf node_modules dist") is None
    True
    """
    found = extreme_destructive(cmd)
    return found.command if found else None


def classify_command(cmd: str) -> Category | None:
    """`extreme_destructive` when running CMD would destroy data that cannot come back.

    Judged from the text alone (no workdir, no branch); `orchestrator.policy` asks the same rules
    with the workdir before a tool call runs.

    >>> classify_command("git push --force origin main")
    'extreme_destructive'
    >>> classify_command("git push --force-with-lease origin feature/login") is None
    True
    """
    return "extreme_destructive" if is_extreme_destructive(cmd) else None


def is_extreme_destructive(text: str) -> str | None:
    """The offending command or statement in TEXT (a shell command, SQL, or a line of either)."""
    return destructive_command(text) or destructive_statement(text)


# --------------------------------------------------------------------------- in agent output

_NL = [
    re.compile(
        r"\b(?:delete|drop|wipe|erase|destroy|purge|truncate|empty)\s+(?:the\s+)?(?:entire\s+|whole\s+|all\s+)?"
        r"(?:production|prod|live|shared)\s+(?:database|db|data|bucket|table|cluster|volume)s?\b",
        re.I,
    ),
    re.compile(
        r"\b(?:drop|wipe|reset|delete|purge|erase)\s+(?:the\s+)?(?:entire\s+|whole\s+)?(?:database|db)\b",
        re.I,
    ),
    re.compile(r"\bforce[- ]push(?:ing)?\s+(?:to\s+)?`?(?:origin\s+)?(?:main|master)\b", re.I),
    # a step that drops or empties a table, collection or bucket, in plain language (a plan's
    # item, "I'll …", "should I …"; not what a migration does)
    re.compile(
        r"(?:^\s*(?:[-*•]\s*|\d+[.)]\s*)?|\b(?:to|and|or|I(?:'ll|’ll| will| would|'d)|should I|shall I|can I)\s+)"
        r"(?:drop|truncate|wipe|purge|empty|delete)\s+(?:the\s+|all\s+|every\s+)?(?:[\w-]+\s+){0,4}?"
        r"(?:tables?|collections?|schemas?|buckets?|volumes?|keyspaces?)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:Datenbank|Produktionsdaten|Produktionsdatenbank|Tabelle)\b[^.?!]{0,40}\b(?:löschen|zurücksetzen|leeren|droppen)\b",
        re.I,
    ),
]
_NL_ASKED = re.compile(
    r"\b(?:delete|remove|wipe|purge|rm -rf)\s+(?:it|them|these|those|(?:the|this|that|these|those|all|every)\s+"
    r"(?:[\w./`-]+\s+){0,3}(?:director(?:y|ies)|dirs?|folders?|files?|artefacts?|artifacts?|branch(?:es)?|"
    r"repos?|repository|repositories))\b",
    re.I,
)
"""Deleting files or directories is asked about, not announced: only a question counts ("Want me
to delete them?", "Should I remove it?"); "I'll remove the temp files" after finished work does not."""
_INLINE = re.compile(r"`([^`\n]{3,300})`")
_CODEX_EXEC = re.compile(r"\bexec\s+(?:bash|sh|zsh)\s+-\w*c\s+(['\"])(.*)\1")
_CMD_START = re.compile(
    r"^\s*(?:\$\s+|sudo\s+)?(?:rm|git|npx|prisma|rails|bin/rails|rake|bundle|python3?|php|dropdb|terraform|"
    r"kubectl|helm|docker|docker-compose|podman|aws|gsutil|dd|redis-cli|psql|mysql|sqlite3|mongosh|"
    r"mongo|find|sequelize|alembic|pnpm|yarn|tofu|pulumi|mkfs\S*)\b"
)

INTENT = re.compile(
    r"\b(?:I(?:'d| would| will|'ll)?\s+(?:need|have|want|like|plan|intend|propose|suggest)\s+to|"
    r"I(?:'d| would)\s+have\s+to|I\s+(?:could|can|would|will|'ll|'d|might)\s+(?:just\s+)?(?:run|execute|drop|delete|reset|wipe|"
    r"truncate|force[- ]push|remove|clear|destroy|purge|empty)|need(?:s|ed)?\s+to\s+(?:run|execute|be\s+run)|"
    r"requires?(?:\s+running)?\s*:?|the\s+(?:only|quickest|fastest|simplest|easiest|clean|cleanest|fast|quick|best|"
    r"obvious|easy)(?:\s+\w+)?\s+(?:way|fix|option|solution|one|route)(?:\s+\w+)?(?:\s+out|\s+forward)?\s+(?:is|would\s+be)|"
    r"(?:fix|solution|workaround)\s+(?:is|would\s+be)\s+to|means\s+running|would\s+(?:fix|solve|resolve)|"
    r"going\s+to\s+(?:run|execute|drop|delete|reset)|about\s+to|proposed\s+fix|suggested\s+fix|to\s+fix,?\s+run|"
    r"run\s+the\s+following|approv\w*|permission|confirm|I\s+(?:would|'d)\s+(?:run|drop|delete|reset|wipe)|"
    r"müsste\s+ich|würde\s+ich|wäre\b|einfachste|schnellste|ausführen|darf\s+ich|soll\s+ich)",
    re.I,
)
CONSEQUENCE = re.compile(
    r"\b(?:would|will|which|that|this|it)\b[^.?!]{0,40}?\b(?:deletes?|drops?|wipes?|erases?|destroys?|"
    r"removes?|rewrites?|truncates?|lose|loses|empties|recreates?)\b|\bwould\s+(?:delete|drop|wipe|erase|destroy|"
    r"lose|remove|rewrite)|\bgehen\b[^.?!]{0,40}\bverloren\b|\bgelöscht\b|\bunwiderruflich\b|\bpermanently\b|"
    r"\bcan(?:no|')t\s+be\s+(?:restored|recovered|undone)",
    re.I,
)
ASK = re.compile(
    r"\?|\b(?:approv\w*|confirm\w*|permission|go\s+ahead|proceed|do\s+you\s+want|should\s+I|shall\s+I|may\s+I|"
    r"OK\s+to|okay\s+to|darf\s+ich|soll\s+ich|bestätig\w*|Freigabe)\b",
    re.I,
)
NEGATION = re.compile(
    r"\b(?:never|don't|do\s+not|did\s+not|didn't|won't|will\s+not|wouldn't|without\s+(?:running|using|dropping|deleting)|"
    r"instead\s+of|rather\s+than|avoid(?:ed|ing)?|not\s+(?:run|use|using|running|needed|necessary)|no\s+force|"
    r"nicht\s+(?:ausführen|verwenden|nutzen)|niemals|kein(?:e|en)?\s+\w+\s+(?:ausgeführt|nötig))\b",
    re.I,
)
DESTRUCTIVE_VERB = re.compile(
    r"\b(?:reset|drop|delete|wipe|truncate|force[- ]push|destroy|purge|erase|remove|rm|löschen|zurücksetzen|"
    r"Reset|leeren)\w*",
    re.I,
)


def _prose_sentences(lines: list[Line]) -> list[tuple[int, str]]:
    """(line number, sentence) for prose, so a hit can look at its neighbours."""
    out: list[tuple[int, str]] = []
    para: list[Line] = []

    def flush() -> None:
        if not para:
            return
        text = "\n".join(ln.text for ln in para)
        finder = LineFinder(para)
        for s in sentences(text):
            no = finder.first(s[:15])
            out.append((para[0].no if no is None else no, s))
        para.clear()

    for ln in lines:
        if ln.zone == "prose" and ln.text.strip():
            para.append(ln)
        else:
            flush()
    flush()
    return out


def _context(sents: list[tuple[int, str]], line_no: int) -> tuple[str, str, str]:
    """(sentence before, the sentence at/containing LINE_NO, the two sentences after)."""
    idx = None
    for k, (no, _s) in enumerate(sents):
        if no <= line_no:
            idx = k
    if idx is None:
        return "", "", " ".join(s for _n, s in sents[:2])
    before = sents[idx - 1][1] if idx > 0 else ""
    return before, sents[idx][1], " ".join(s for _n, s in sents[idx + 1 : idx + 3])


def _is_proposal(before: str, same: str, after: str, *, block: bool) -> bool:
    lead = same if not block else f"{before} {same}"
    follow = after if not block else f"{same} {after}"
    asked = bool(ASK.search(same)) or bool(ASK.search(follow) and DESTRUCTIVE_VERB.search(follow))
    if NEGATION.search(same) and not ASK.search(same):
        return False
    intent = bool(INTENT.search(lead) or CONSEQUENCE.search(lead))
    return intent or asked


_HOLDS_COMMAND = re.compile(
    r"^[\s│|▌]*(?:•\s*)?(?:Proposed Command|Allow command\?|Allow execution of\b|Run this command\?|"
    r"Run shell commands?\? \(Y\)es|Would you like to run the following command\?)",
    re.I,
)
"""A CLI holding a command for approval: Codex's `• Proposed Command`, Gemini CLI's `Allow
execution of: 'kubectl'?`, Aider's `Run shell commands? (Y)es/(N)o`."""
_CMD_PREFIX = re.compile(r"^(?:\?\s+Shell\s+|\$\s+)")


def awaiting_approval(lines: list[Line]) -> bool:
    """A CLI holds a command for approval among the output's last lines (`Run shell commands?
    (Y)es/(N)o`, Codex's `Would you like to run the following command?`)."""
    return any(_HOLDS_COMMAND.match(ln.text) for ln in [x for x in lines if x.text.strip()][-12:])


def _awaiting_command(lines: list[Line]) -> str | None:
    """The output ends on a CLI holding a destructive command for approval (the prompt among its
    last lines, the command above or under it): the command, or None."""
    if not awaiting_approval(lines):
        return None
    for text in reversed([ln.text for ln in lines if ln.text.strip()][-12:]):
        cmd = _CMD_PREFIX.sub("", text.strip(" \t│|▌└⎿"))
        if hit := destructive_command(cmd) or destructive_sql(cmd):
            return hit
    return None


def find_destructive_proposal(lines: list[Line], tail_text: str) -> str | None:
    """The extreme destructive command the agent proposes, intends, or asks to run — or None.

    File content (a ```sql migration it wrote, a ```python block) and commands it says it will
    not run or did not run are ignored; commands it merely mentions in passing too.
    """
    if (held := _awaiting_command(lines)) is not None:
        return held
    sents = _prose_sentences(lines)
    hits: list[tuple[int, str, bool]] = []  # (line, command, is_block)
    for ln in lines:
        text = ln.text
        if ln.zone == "fence":
            if ln.lang in SHELL_LANGS:
                cmd = re.sub(r"^\s*(?:\$|>|#)\s+", "", text)
                hit = destructive_command(cmd) or destructive_sql(cmd)
            elif ln.lang in SQL_LANGS:
                hit = destructive_sql(text)
            else:
                hit = None
            if hit:
                hits.append((ln.no, hit, True))
            continue
        if ln.zone == "output":
            m = _CODEX_EXEC.search(text)
            cand = (
                m.group(2)
                if m
                else re.sub(r"^\s*(?:\$|❯)\s+", "", text)
                if re.match(r"^\s*(?:\$|❯)\s", text)
                else None
            )
            if cand:
                hit = destructive_command(cand)
                if hit:
                    hits.append((ln.no, hit, True))
            continue
        # prose: inline code, indented commands, SQL written inline, plain-language phrases
        for m in _INLINE.finditer(text):
            hit = destructive_command(m.group(1)) or destructive_sql(m.group(1))
            if hit:
                hits.append((ln.no, hit, False))
        if _CMD_START.match(text) and text.startswith(("    ", "\t")):
            hit = destructive_command(text.strip())
            if hit:
                hits.append((ln.no, hit, True))
        plain = _INLINE.sub("", text)
        hit = destructive_sql(plain if not text.startswith(("    ", "\t")) else text)
        if hit and (hit.isupper() or text.startswith(("    ", "\t"))):
            hits.append((ln.no, hit, text.startswith(("    ", "\t"))))
        for rx in _NL:
            m2 = rx.search(plain)
            if m2:
                hits.append((ln.no, m2.group(0), False))
    for _no, sent in sents[-6:]:
        m3 = _NL_ASKED.search(sent)
        if m3 and sent.rstrip().endswith("?") and not NEGATION.search(sent):
            return m3.group(0)
    named: list[str] = []
    for no, hit, block in hits:
        before, same, after = _context(sents, no)
        if block:
            # a block belongs to the sentence that introduces it and the one that follows it
            before_b = next((s for n, s in reversed(sents) if n < no), "")
            after_b = " ".join(s for n, s in sents if n > no)[:400]
            if _is_proposal("", before_b, after_b, block=True):
                return hit
            negated = bool(NEGATION.search(before_b))
        else:
            if _is_proposal(before, same, after, block=False):
                return hit
            negated = bool(NEGATION.search(same))
        if not negated:
            named.append(hit)
    # a final question about a destructive step that was named earlier
    if named and ASK.search(tail_text):
        # the question names the step, or follows the sentence that says what it destroys
        sents_t = sentences(tail_text)
        asks = [
            s
            for k, s in enumerate(sents_t)
            if ASK.search(s)
            and (DESTRUCTIVE_VERB.search(s) or (k and CONSEQUENCE.search(sents_t[k - 1])))
        ]
        if asks and not any(NEGATION.search(s) and not ASK.search(s) for s in asks):
            return named[-1]
    return None


_HELD = re.compile(
    r"\b(?:HALT\b|needs? your (?:explicit )?(?:approval|OK|sign-off|go-ahead)|approval is required|"
    r"requires? (?:your )?(?:explicit )?approval|without your (?:explicit )?(?:OK|approval|confirmation|"
    r"go-ahead)|(?:before|until) (?:it is|it's|I|you) (?:executed?|run|approve|confirm)|"
    r"I (?:have not|haven't|did not|didn't) (?:run|executed?|applied|apply|deleted|removed)|was not (?:run|executed|applied)|"
    r"\bplease confirm\b|\bconfirm you want\b|\bnot (?:been )?(?:run|applied|executed) yet\b|"
    r"\b(?:should|shall|may) I (?:run|apply|execute)\b|"
    r"\bdid(?:n't| not) run (?:it|this|that|them|any)\b|\bnot (?:been )?executed\b|\bplease approve\b|"
    # de, fr, es, it, pt: not run yet, or only once the person approves
    r"\bnoch nicht ausgeführt\b|\bnicht ausgeführt\b|\berst\b[^.?!\n]{0,30}\bwenn (?:du|Sie)\b[^.?!\n]{0,40}\bfreig\w+|"
    r"\bpas (?:encore )?(?:été )?exécut\w+|\bno (?:lo )?he ejecutado\b|\bno (?:se )?ha ejecutado\b|"
    r"\bnon (?:l['’]ho |è stato |ancora )*eseguit\w+|\bnão (?:foi |o )?executad\w+|\bnão executei\b|"
    r"\bPosso prosseguir\b|\b¿?Puedo (?:continuar|proceder)\b)|"
    # zh, ja: not run yet, or asked to confirm the deletion
    r"(?:还没有|尚未|没有)执行|确认要?执行|まだ実行していません|実行してもよろしい",
    re.I,
)
_DATA_LOSS = re.compile(
    r"\b(?:permanently (?:delete|remove|erase|destroy|lose)\w*|would (?:destroy|delete|wipe|erase|drop|"
    r"discard|lose)\b|discards? (?:every|all)|data loss|lose (?:all|every)|(?:cannot|can't|can ?not) be "
    r"(?:undone|recovered|restored)|irreversibl\w+|unrecoverabl\w+|unwiderruflich|endgültig (?:gelöscht|verloren)|"
    r"irréversible|irreversív\w+|irreversibil\w+|definitivamente (?:borrad|eliminad|apagad|cancellat)\w*|"
    r"(?:is|are|would be) (?:permanent|not (?:reversible|recoverable))|"
    r"\b(?:would|will) (?:not be (?:kept|preserved|retained)|be lost)\b|"
    r"\b(?:this|it|that) (?:deletes|destroys|drops|wipes|erases)\b|"
    r"\bwill (?:permanently )?(?:destroy|delete|wipe|erase|drop)\b|"
    r"\bpermanently discards?\b|\bthrows? away\b|\blos(?:e|es|ing) [^.?!\n]{0,40}\bpermanently\b|\bno undo\b|"
    r"\bhard[- ]delet\w+|\b(?:exclusão|eliminação|remoção) é definitiva\b|\bborrado es definitivo\b|"
    # es, pt, fr, de: "would delete real accounts", "apagaria dados", "supprimerait", "würde … löschen"
    r"\b(?:borraría|eliminaría|apagaria|excluiria|supprimerait|effacerait)\b|\bwürde\b[^.?!\n]{0,40}\blöschen\b)|"
    r"彻底删除|永久删除|无法恢复|不可恢复|完全に削除|復元できません",
    re.I,
)


def held_for_data_loss(tail_text: str, *, waiting: bool = False) -> str | None:
    """The agent's final words hold a step back for approval ("HALT", "I have not run `terraform
    apply`", "not going to run this without your explicit OK") and say it would destroy data
    ("would permanently delete those addresses", "Terraform would destroy `prod-main`"): a
    destructive step proposed in prose, whatever command it names or none. WAITING: a CLI holds
    a command for approval at the end (`awaiting_approval`). The sentence that says what would be
    lost, or None."""
    tail_text = tail_text.replace("**", "")  # "I have **not** run these", "would **destroy `x`**"
    if not (_HELD.search(tail_text) or waiting):
        return None
    m = _DATA_LOSS.search(tail_text)
    if m is None:
        return None
    return next((x for x in sentences(tail_text) if m.group(0) in x), m.group(0))
