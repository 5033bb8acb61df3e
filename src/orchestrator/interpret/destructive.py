"""Recognising extreme destructive commands (seed 004): data that cannot come back.

Two uses: the agent adapters hold a dangerous shell command before it runs
(`classify_command`), and the interpreter escalates when an agent *proposes or asks* to run one
(`find_destructive_proposal`). Routine clean-ups (`rm -rf node_modules`, `build/`, `/tmp/...`,
`git push --force-with-lease` to a feature branch) are not destructive in this sense.
"""

from __future__ import annotations

import re
import shlex

from orchestrator.interpret.text import SHELL_LANGS, SQL_LANGS, Line, sentences
from orchestrator.models import Category

# --------------------------------------------------------------------------- shell commands

SHARED_BRANCHES = frozenset(
    {
        "main",
        "master",
        "develop",
        "development",
        "dev",
        "trunk",
        "production",
        "prod",
        "staging",
        "release",
        "live",
        "stable",
        "head",
    }
)
_SAFE_BASENAMES = frozenset(
    {
        "node_modules",
        "build",
        "builds",
        "dist",
        "out",
        "target",
        ".cache",
        "cache",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".env.d",
        "coverage",
        ".coverage",
        "htmlcov",
        ".next",
        ".nuxt",
        ".turbo",
        ".parcel-cache",
        ".svelte-kit",
        ".gradle",
        ".eggs",
        "tmp",
        "temp",
        ".tmp",
        ".angular",
        ".expo",
        "storybook-static",
        "bin",
        "obj",
        ".terraform",
        ".serverless",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        ".yarn-cache",
        ".npm",
        ".pnpm-store",
        "site",
        "_site",
        "public/build",
        "lib-cov",
        ".nyc_output",
        "*.pyc",
        "*.pyo",
        "*.o",
        "*.log",
        "*.egg-info",
        "*.tsbuildinfo",
        "*.class",
        "logs",
        ".DS_Store",
        "test-results",
        "playwright-report",
        ".vite",
        "vendor/bundle",
        "deps",
        "_build",
        ".dart_tool",
        ".stack-work",
        "dist-newstyle",
        "cmake-build-debug",
        "cmake-build-release",
        ".idea",
        "tmp/cache",
    }
)
_SAFE_SUFFIXES = (
    ".egg-info",
    ".pyc",
    ".pyo",
    ".o",
    ".log",
    ".tsbuildinfo",
    ".class",
    ".tmp",
    ".orig",
    ".rej",
    ".bak",
    ".swp",
)
_DATA_WORDS = re.compile(
    r"(^|[/_.-])(data|db|dbs|database|databases|uploads?|media|storage|backups?|prod|production|"
    r"pgdata|postgres(ql)?|mysql|mongo(db)?|redis|volumes?|secrets?|\.git|var|srv|home|users|etc|"
    r"usr|opt|mnt|documents|desktop|photos|state)($|[/_.-])",
    re.I,
)
_ROOTISH = frozenset(
    {
        "/",
        "/*",
        "~",
        "~/",
        "~/*",
        "$HOME",
        "${HOME}",
        "$HOME/",
        "${HOME}/",
        "$HOME/*",
        "*",
        ".",
        "./",
        "./*",
        "..",
        "../",
        "../*",
        ".*",
        "/.",
        "~/.",
        "/home",
        "/home/*",
        "/root",
        "/etc",
        "/usr",
        "/var",
        "/boot",
        "/opt",
        "/srv",
        "/mnt",
    }
)


# scratch space: removing it is routine, never data loss (these paths are matched, not used)
_SCRATCH = ("/tmp/", "/var/tmp/", "$TMPDIR", "${TMPDIR", "$(mktemp", "/private/tmp/", "/dev/shm/")  # noqa: S108


def _rm_target_dangerous(target: str) -> bool:
    t = target.strip().strip("'\"")
    if not t:
        return False
    if t in _ROOTISH or re.fullmatch(r"/+\*?", t):
        return True
    if t.startswith(_SCRATCH):
        return False
    path = t.rstrip("/")
    if path.endswith("/*"):
        path = path[:-2]
    base = path.rsplit("/", 1)[-1]
    if base in _SAFE_BASENAMES or path in _SAFE_BASENAMES or base.endswith(_SAFE_SUFFIXES):
        return False
    if re.fullmatch(r"\*\.\w+", base) and base in _SAFE_BASENAMES:
        return False
    if t.startswith(("~", "$HOME", "${HOME}")):
        return True
    if t.startswith("/"):
        return True
    if "$" in t:
        return False  # a variable we cannot see; too common in scripts to hold every time
    return bool(_DATA_WORDS.search(path))


def _split_commands(cmd: str) -> list[list[str]]:
    """Simple commands of a shell line: tokens per command, split on ; && || | and newlines."""
    try:
        lex = shlex.shlex(cmd, posix=True, punctuation_chars=";&|()\n")
        lex.whitespace_split = True
        lex.commenters = "#"
        tokens = list(lex)
    except ValueError:
        tokens = cmd.split()
    out: list[list[str]] = []
    cur: list[str] = []
    for tok in tokens:
        if tok and set(tok) <= set(";&|()\n"):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        out.append(cur)
    return out


_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice", "doas", "xargs"})


def _strip_wrappers(tokens: list[str]) -> list[str]:
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tok) or tok in _WRAPPERS:
            i += 1
            continue
        if tok.startswith("-") and i > 0 and tokens[i - 1] in _WRAPPERS:
            i += 1
            continue
        break
    return tokens[i:]


def _git_push_dangerous(args: list[str]) -> bool:
    flags = [a for a in args if a.startswith("-")]
    positional = [a for a in args if not a.startswith("-")]
    force = any(
        f in ("--force", "-f", "--mirror")
        or (re.fullmatch(r"-[a-zA-Z]+", f) is not None and "f" in f)
        for f in flags
    )
    lease = any(f.startswith(("--force-with-lease", "--force-if-includes")) for f in flags)
    delete = "--delete" in flags or "-d" in flags
    refspecs = positional[1:] if positional else []
    plus = [r for r in refspecs if r.startswith("+")]
    if "--mirror" in flags:
        return True
    if not (force or lease or plus or delete or any(r.startswith(":") for r in refspecs)):
        return False

    def dest(ref: str) -> str:
        d = ref.lstrip("+").split(":", 1)[-1]
        return d.removeprefix("refs/heads/").lower()

    targets = [dest(r) for r in refspecs]
    if any(
        t in SHARED_BRANCHES or t.startswith(("release/", "release-", "hotfix/")) for t in targets
    ):
        return True
    if not targets:
        return force and not lease  # `git push --force` of whatever branch is checked out
    return False


_SQL = [
    re.compile(r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA)\b(?:\s+IF\s+EXISTS)?\s*[`\"\w.]*", re.I),
    re.compile(r"\bTRUNCATE\s+TABLE\s+[`\"\w.]+", re.I),
    re.compile(r"\bTRUNCATE\s+[`\"\w.]+(?:\s*,\s*[`\"\w.]+)*\s*(?:CASCADE\s*)?;"),
    re.compile(r"\bDELETE\s+FROM\s+[`\"\w.]+\s*;", re.I),
    re.compile(r"\.dropDatabase\(\)|\bdb\.\w+\.drop\(\)"),
    re.compile(r"\bFLUSHALL\b|\bFLUSHDB\b"),
]


def destructive_sql(text: str) -> str | None:
    """The first statement in TEXT that drops or empties a table, schema or database."""
    for rx in _SQL:
        m = rx.search(text)
        if m:
            return m.group(0).strip()
    return None


def _simple_command_dangerous(tokens: list[str]) -> bool:
    tokens = _strip_wrappers(tokens)
    if not tokens:
        return False
    prog = tokens[0].rsplit("/", 1)[-1]
    args = tokens[1:]
    low = [a.lower() for a in args]

    if prog in ("bash", "sh", "zsh", "dash") and args:
        for k, a in enumerate(args[:-1]):
            if re.fullmatch(r"-[a-z]*c[a-z]*", a):
                return destructive_command(args[k + 1]) is not None
        return False
    if prog == "rm":
        recursive = any(
            a in ("--recursive", "-r", "-R")
            or (re.fullmatch(r"-[a-zA-Z]+", a) is not None and ("r" in a or "R" in a))
            for a in args
        )
        targets = [a for a in args if not a.startswith("-")]
        return recursive and any(_rm_target_dangerous(t) for t in targets)
    if prog == "git" and args:
        sub_i = 0
        while sub_i < len(args) and args[sub_i].startswith("-"):
            sub_i += 2 if args[sub_i] in ("-C", "-c") else 1
        if sub_i < len(args) and args[sub_i] == "push":
            return _git_push_dangerous(args[sub_i + 1 :])
        return False
    if "prisma" in (prog, *low[:2]):
        joined = " ".join(low)
        return bool(re.search(r"\bmigrate\s+reset\b|\bdb\s+push\b.*--force-reset", joined))
    if prog in ("rails", "rake") or (prog == "bundle" and "exec" in low):
        return any(
            a
            in (
                "db:drop",
                "db:reset",
                "db:purge",
                "db:schema:load",
                "db:truncate_all",
                "db:migrate:reset",
                "db:drop:all",
                "db:setup",
            )
            for a in low
        )
    if prog.startswith("python") or prog in ("django-admin", "manage.py", "./manage.py"):
        return any(a in ("flush", "reset_db", "sqlflush") for a in low)
    if prog in ("php", "artisan") and any(
        a in ("migrate:fresh", "migrate:reset", "db:wipe") for a in low
    ):
        return True
    if prog in ("dropdb", "mkfs", "wipefs", "shred") or prog.startswith("mkfs."):
        return True
    if prog in ("sequelize", "npx", "typeorm", "knex", "yarn", "pnpm"):
        joined = " ".join(low)
        return bool(
            re.search(
                r"\bdb:drop\b|\bschema:drop\b|\bmigrate\s+reset\b|\bdb\s+push\b.*--force-reset",
                joined,
            )
        )
    if prog == "alembic":
        return "downgrade" in low and "base" in low
    if prog == "terraform" or prog == "tofu" or prog == "pulumi":
        return "destroy" in low or "-destroy" in low
    if prog == "kubectl" and "delete" in low:
        return any(
            a
            in (
                "namespace",
                "ns",
                "pv",
                "pvc",
                "persistentvolumeclaim",
                "--all",
                "all",
                "--all-namespaces",
                "statefulset",
                "sts",
            )
            or a.startswith(("namespace/", "ns/"))
            for a in low
        )
    if prog == "helm" and ("uninstall" in low or "delete" in low):
        return True
    if prog in ("docker", "podman", "docker-compose"):
        joined = " ".join(low)
        return bool(
            re.search(
                r"\bvolume\s+(rm|prune)\b|\bsystem\s+prune\b.*--volumes|\bdown\b.*(\s-v\b|--volumes)",
                joined,
            )
        )
    if prog == "aws" and len(low) >= 2 and low[0] == "s3":
        return (low[1] == "rm" and "--recursive" in low) or (low[1] == "rb" and "--force" in low)
    if prog == "gsutil" and "rm" in low and any(a in ("-r", "-R", "-rf") for a in low):
        return True
    if prog == "dd" and any(a.startswith("of=/dev/") for a in low):
        return True
    if prog == "redis-cli" and any(a in ("flushall", "flushdb") for a in low):
        return True
    if prog in ("psql", "mysql", "sqlite3", "mongosh", "mongo", "cockroach", "clickhouse-client"):
        return destructive_sql(" ".join(args)) is not None
    if prog == "find" and "-delete" in low:
        roots = [a for a in args if not a.startswith("-")][:1]
        return any(_rm_target_dangerous(r) for r in roots)
    return False


def destructive_command(cmd: str) -> str | None:
    """The extreme destructive part of a shell command line, or None.

    >>> destructive_command("cd api && npx prisma migrate reset --force")
    'npx prisma migrate reset --force'
    >>> destructive_command("rm -rf node_modules dist") is None
    True
    """
    for tokens in _split_commands(cmd):
        if _simple_command_dangerous(tokens):
            return " ".join(tokens)
    return None


def classify_command(cmd: str) -> Category | None:
    """`extreme_destructive` when running CMD would destroy data that cannot come back.

    Meant for holding an agent's shell tool call before it runs.

    >>> classify_command("git push --force origin main")
    'extreme_destructive'
    >>> classify_command("git push --force-with-lease origin feature/login") is None
    True
    """
    return "extreme_destructive" if is_extreme_destructive(cmd) else None


def is_extreme_destructive(text: str) -> str | None:
    """The offending command or statement in TEXT (a shell command, SQL, or a line of either)."""
    hit = destructive_command(text)
    if hit:
        return hit
    return destructive_sql(text)


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
    re.compile(
        r"\b(?:Datenbank|Produktionsdaten|Produktionsdatenbank|Tabelle)\b[^.?!]{0,40}\b(?:löschen|zurücksetzen|leeren|droppen)\b",
        re.I,
    ),
]
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
        for s in sentences(text):
            head = s[:30]
            no = next(
                (ln.no for ln in para if head[:15] and head[:15] in " ".join(ln.text.split())),
                para[0].no,
            )
            out.append((no, s))
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


def find_destructive_proposal(lines: list[Line], tail_text: str) -> str | None:
    """The extreme destructive command the agent proposes, intends, or asks to run — or None.

    File content (a ```sql migration it wrote, a ```python block) and commands it says it will
    not run or did not run are ignored; commands it merely mentions in passing too.
    """
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
        asks = [s for s in sentences(tail_text) if ASK.search(s) and DESTRUCTIVE_VERB.search(s)]
        if asks and not any(NEGATION.search(s) and not ASK.search(s) for s in asks):
            return named[-1]
    return None
