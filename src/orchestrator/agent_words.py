"""What a failed attempt's own words ask of the person: a question or a choice addressed to
them, a step that would destroy data held back for approval, or a destructive command it ran.

The brain reads these before the errors around them (issue 11): an agent that asks is not
helped by another attempt, which would only ask again. Kept apart from `brain.py`, which
decides; this module only reads, with the interpreter's rules and `rules.destructive`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.interpret.core import interpret_rules
from orchestrator.interpret.destructive import held_for_data_loss, is_extreme_destructive
from orchestrator.interpret.model import Interpretation
from orchestrator.interpret.text import final_prose, sentences, split_lines, tail_text
from orchestrator.models import Category
from orchestrator.rules.failure import ANSI
from orchestrator.rules.hints import SCAN_CHARS, quote
from orchestrator.rules.summaries import is_summary, reports_a_question

__all__ = [
    "Asked",
    "asks_the_person",
    "data_at_stake",
    "destroys",
    "final_words",
    "names_destruction",
    "ran_destructive",
]


@dataclass(frozen=True)
class Asked:
    """The agent asked the person: what it asked (quoted), and the seed-004 category."""

    said: str
    category: Category | None


_DATA_AT_STAKE = re.compile(
    r"\b(?<!soft-)(?<!soft )(?:delet\w*|drop\w*|wip\w+|truncat\w*|destroy\w*|reset\w*|los(?:e|ing|t)|purg\w+|"
    r"force[- ]push\w*|overwrit\w+|rewrit\w+)\b(?:[^.\n]|\.(?=\w)){0,80}\b(?:rows?|records?|data|tables?|schema|"
    r"databases?|history|commits?|users?)\b",
    re.I,
)
"""A step a summary reports the agent held back that would lose data or history."""


def data_at_stake(words: str) -> bool:
    """WORDS name a step that would lose data or history ("Confirm force-push of rewritten
    history", "DROP COLUMN … (18,406 rows with data)"), in a sentence that does not say it is
    not taken ("I did not want to delete or rewrite a test …")."""
    return any(
        _DATA_AT_STAKE.search(sentence) and not _NOT_DONE.search(sentence)
        for sentence in sentences(words)
    )


def destroys(words: str) -> bool:
    """The agent's words put forward a step that destroys data or shared history."""
    return bool(
        held_for_data_loss(words, waiting=True)
        or any(is_extreme_destructive(line.strip(" `$")) for line in words.splitlines())
    )


def final_words(text: str) -> str:
    """The agent's last prose (`interpret.text.final_prose`), without the tool output above."""
    lines = split_lines(text)
    return tail_text(lines, final_prose(lines))


_QUOTE_OPEN = re.compile(r"(:\s*)['‘]")
_QUOTE_CLOSE = re.compile(r"([.?!])['’](?=\s*$)", re.M)


def asks_the_person(latest: str) -> Asked | None:
    """The latest attempt ended on the agent asking the person: a question addressed to them,
    a choice between approaches, a step that would destroy data held back for approval (the
    interpreter's reading of its output). Another attempt would only ask again."""
    text = ANSI.sub("", latest[-SCAN_CHARS:])
    if is_summary(text):  # a summary quotes the agent's last words: `Agent stopped: "Which …?"`
        text = _QUOTE_OPEN.sub(r"\1", re.sub(r"[\"“”]", "", text))
        text = _QUOTE_CLOSE.sub(r"\1", text)
    reading = interpret_rules(text)
    words = final_words(text)
    if reading.verdict == "failed" and "?" in words:
        # the attempt failed, which its tools' records say first; its last words may still ask
        for said in (words, words.rsplit("\n\n", 1)[-1]):
            last = interpret_rules(said)
            asked = last.question is None or "?" in last.question or "？" in last.question
            if last.verdict == "needs_human" and asked and (last.category or destroys(words)):
                reading = last
                break
    if reading.verdict != "needs_human" and is_summary(text):
        reported = reports_a_question(text)  # "It asks whether to merge or delete."
        if reported is not None:
            held = _DATA_AT_STAKE.search(text) or is_extreme_destructive(text)
            category: Category = "extreme_destructive" if held else "ambiguous_requirements"
            reading = Interpretation(verdict="needs_human", category=category, question=reported)
    if reading.verdict != "needs_human" or reading.category == "external_service":
        return None
    if reading.category != "extreme_destructive" and destroys(words or text):
        reading = reading.model_copy(update={"category": "extreme_destructive"})
    return Asked(quote(reading.question or reading.evidence or "", 160), reading.category)


_RAN = re.compile(
    r"^\s*(?:\$|❯|PS>)\s+(\S.*)$|\bBash\((.+)\)\s*$|\[execute_command for '(.+)'\]|"
    r"^\s*(?:COMMAND|Running):[ \t]*\n?[ \t]*(\S.*)$",
    re.M,
)


_THROWAWAY = re.compile(
    r"(?<![a-z])(?:test|tests|testing|ci|e2e|scratch|sandbox|tmp|temp|local|localhost|localstack|"
    r"fixtures?|ephemeral|throwaway|disposable)(?![a-z])|127\.0\.0\.1",
    re.I,
)
_SHARED = re.compile(
    r"(?<![a-z])(?:prod|production|staging|stage|shared|main|master|live|release|primary)(?![a-z])",
    re.I,
)


def ran_destructive(text: str) -> str | None:
    """The first command the agent ran in TEXT (`$ cmd`, `Bash(cmd)`, a Cline `execute_command`,
    `COMMAND:`) that destroys data or shared history (`rules.destructive`), else None. One aimed
    at a throwaway target it names (a test database, a CI stack, a scratch folder) and at nothing
    shared lost nothing a person must answer for: the attempt's failure is still read."""
    for match in _RAN.finditer(text):
        command = next(g for g in match.groups() if g)
        found = _lost_something(is_extreme_destructive(command), command)
        if found:
            return found
    return None


_CODE_SPAN = re.compile(r"`([^`\n]+)`|\"([^\"\n]{4,})\"|“([^”\n]{4,})”|„([^“\n]{4,})“")
_CLAUSE_BREAK = re.compile(r"[—;:,(]|\s-\s")
_LINE_HEAD = re.compile(r"^[\s+>*•|-]*(?:\d+[.)]\s+)?(?:[\w-]+ ran:\s*)?(?:-\s*run:\s*)?[`$❯]*\s*")
"""What stands before a command on its line: a list or diff marker, a plan's number, a runner's
`Cline ran:`, a CI step's `- run:`, a prompt."""
_NOT_A_COMMAND = re.compile(
    # an ORM's query log: knex, Prisma, Sequelize, Hibernate, SQLAlchemy's engine echo
    r"^(?:[\w-]+:query\b|Executing \(\w+\):|Hibernate:|[\w\s:-]*\bsqlalchemy\.engine\b)|"
    r"^(?:E\s|assert\b|(?:INFO|DEBUG|WARN\w*|NOTICE|HINT|DETAIL|LINE \d+)\b|[A-Z]+(?: [A-Z]+)?;?$)|"
    r"\b\w*(?:Error|Exception)\b|\berror\b|\b(?:FAILED|FAIL|PASSED|ok)\b"
)
"""A line of tool output that quotes a statement: an ORM's query log, an error, an assertion, a
log record, psql's `DROP TABLE` tag. Only a command in backticks on it is the agent's."""
_NOT_DONE = re.compile(
    r"\b(?:won't|won’t|will not|never|not|don't|do not|didn't|did not|rather than|instead of|"
    r"avoid\w*|without|payload|injection|downgrade|down migration|roll ?back)\b",
    re.I,
)
"""A line that names a destructive step to say it is not taken, or as what a test sends, or
what undoing a migration would run."""


def _lost_something(command: str | None, line: str = "") -> str | None:
    """COMMAND, unless it (or the LINE naming it) is aimed at a throwaway target and at nothing
    shared."""
    where = f"{command} {line}"
    if command and not (_THROWAWAY.search(where) and not _SHARED.search(where)):
        return command
    return None


def _spans(sentence: str) -> list[tuple[str, str]]:
    """Each command in backticks or quotes in SENTENCE, with the clause that leads up to it:
    `need approval for "DROP TABLE …"`, "I won't use `prisma migrate reset`". Quotes led by tool
    output (`assert "DROP TABLE x" not in sql`) are strings of code, not commands."""
    out = []
    for m in _CODE_SPAN.finditer(sentence):
        lead = _CLAUSE_BREAK.split(sentence[: m.start()])[-1]
        if m.group(1) is None and _NOT_A_COMMAND.search(lead.strip()):
            continue
        said = next(g for g in m.groups() if g)
        out.append((said, lead + said))
    return out


def names_destruction(text: str) -> str | None:
    """A command that destroys data or shared history in the tail of a failed attempt, run or
    put forward: a line of its own (a plan's step, a runner's `Cline ran: rm -rf …`, a CI
    step), or in backticks or quotes in the agent's words ("Freed 212 GB by running `rm -rf
    data/raw/`", `waiting for approval of "DROP TABLE events CASCADE"`). Either way a person has
    to look before another attempt runs it, or builds on what it lost. What is said not to be
    taken, tool output quoting SQL, and throwaway targets are passed over."""
    for line in ANSI.sub("", text[-SCAN_CHARS:]).splitlines():
        for sentence in sentences(line):
            command = _LINE_HEAD.sub("", sentence)
            candidates = _spans(sentence)
            if not _NOT_A_COMMAND.search(command.strip()):
                candidates.insert(0, (command, sentence))
            for candidate, said in candidates:
                if _NOT_DONE.search(said):
                    continue
                found = _lost_something(is_extreme_destructive(candidate), said)
                if found:
                    return found
    return None
