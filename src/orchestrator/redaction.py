"""Secrets found by their value, wherever they are written: a run's stored settings, its files,
`config show` and error messages. Key names catch `api_key = …`; these catch the rest — a password
in a database URL, a `--token=…` inside an agent command template, a provider key pasted anywhere.

>>> redact_text("postgresql://app:hunter2@db/prod")
'postgresql://app:<redacted>@db/prod'
>>> redact_text("my-agent --api-key sk-abcdefghijklmnopqrstuv {prompt_file}")
'my-agent --api-key <redacted> {prompt_file}'
>>> redact_text("notify: tgram://123456:AAbbCC/987 ntfys://ntfy.sh/my-topic")
'notify: tgram://<redacted> ntfys://ntfy.sh/<redacted>'
"""

from __future__ import annotations

import os
import re

REDACTED = "<redacted>"

PROVIDER_KEYS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY", "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY",
    "COHERE_API_KEY", "HF_TOKEN", "HUGGINGFACE_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "ORCHESTRATOR_LLM_API_KEY",
)  # fmt: skip
"""Environment variables whose values are credentials: each value is redacted wherever it appears."""
_SECRET_VAR = re.compile(r"(?:_API_KEY|_TOKEN|_SECRET|_SECRET_KEY|_PASSWORD)$")

_APPRISE = (
    r"jsons?|xmls?|forms?|ntfys?|tgram|discord|slack|msteams|mailtos?|pbul|pover|gotifys?|join"
    r"|ifttt|prowl|matrixs?|mmosts?|rockets?|zulip|signals?|twilio|sns|ses|pushed|spush|barks?"
    r"|apprises?|gchat|guilded|revolt|opsgenie|pagerduty|pjets?|lametric|line|dingtalk|feishu|lark"
    r"|wxteams|wxpusher|flock|mastodon|toot|misskey|nctalks?|ncloud|o365|azure|whatsapp|threema"
    r"|teams|hassios?|pushover|pushbullet|telegram|gitter|kumulos|mailgun|sendgrid|sparkpost"
    r"|smtp2go|webexteams"
)
"""Apprise's notification schemes: their tokens live in the host and path (`tgram://BOT/CHAT`)."""
_APPRISE_URL = re.compile(rf"\b(?:{_APPRISE})://[^\s'\"<>]+", re.IGNORECASE)
_HOST = re.compile(
    r"(?:localhost|\[[0-9a-fA-F:.]+\]|[\w-]+(?:\.[\w-]+)*\.[a-zA-Z][\w-]*|\d+(?:\.\d+){3})"
    r"(?::\d+)?"
)


def redact_url(url: str) -> str:
    """A notification URL with only its scheme and host name left: the user, password, path and
    query go (a bot token, a webhook id, an ntfy topic are all secrets), and so does a host that
    is not a host name (`tgram://BOTTOKEN/CHAT` → `tgram://<redacted>`)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return REDACTED
    netloc, tail = [*re.split(r"(?=[/?#])", rest, maxsplit=1), ""][:2]
    _, at, host = netloc.rpartition("@")
    if not _HOST.fullmatch(host):
        return f"{scheme}://{REDACTED}"
    keep = f"{scheme}://{REDACTED + '@' if at else ''}{host}"
    return keep + (f"/{REDACTED}" if tail.strip("/") else tail)


_WORD = r"(?:(?:api|access|secret|private|auth)[-_]?key|apikey|token|secret|password|passwd|credentials?|auth)"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host — the user stays, the password goes
    (re.compile(r"(\b[a-zA-Z][\w+.-]*://[^\s:/@'\"]*:)[^\s@/'\"]+(@)"), rf"\1{REDACTED}\2"),
    # --token=X, --api-key X, -p=X (not numbers: --max-tokens 100; not {placeholders})
    (
        re.compile(
            rf"(--?[\w-]*{_WORD}s?)(=|\s+)(?!\d+(?:\s|$))(?!\{{)(?!{re.escape(REDACTED)})"
            r"(\"[^\"]*\"|'[^']*'|[^\s'\"]+)",
            re.I,
        ),
        rf"\1\2{REDACTED}",
    ),
    # FOO_API_KEY=X, password=X (env assignments in templates, URLs' query strings)
    (
        re.compile(
            rf"(\b[\w.-]*{_WORD}s?)(=)(?!\d+(?:[\s&]|$))(?!\{{)(?!{re.escape(REDACTED)})"
            r"(\"[^\"]*\"|'[^']*'|[^\s&'\"]+)",
            re.I,
        ),
        rf"\1\2{REDACTED}",
    ),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    # token shapes: OpenAI/Anthropic sk-…, GitHub ghp_/gho_/github_pat_, Slack xox…, Google AIza…,
    # AWS AKIA…, GitLab glpat-, Hugging Face hf_
    (
        re.compile(
            r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|xox[abprse]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}"
            r"|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,})"
        ),
        REDACTED,
    ),
)


_MAYBE = re.compile(
    r"://|key|token|secret|passw|credential|auth|bearer|basic|sk-|gh[pousr]_|github_pat_|xox|aiza"
    r"|akia|glpat-|hf_",
    re.I,
)
"""What every pattern above needs somewhere in the text: without it they are not run (~1 µs
instead of ~25 for a plain line)."""


def known_secrets(env: dict[str, str] | None = None) -> list[str]:
    """Values of the provider key variables (and any `*_API_KEY`/`*_TOKEN`/… variable) set now."""
    env = dict(os.environ) if env is None else env
    values = {
        v
        for k, v in env.items()
        if (k in PROVIDER_KEYS or _SECRET_VAR.search(k)) and v and len(v) >= 8
    }
    return sorted(values, key=len, reverse=True)  # longest first: no half-replaced value


def redact_text(text: str, env: dict[str, str] | None = None) -> str:
    """TEXT with every credential-looking value replaced by `<redacted>`."""
    if not text:
        return text
    for value in known_secrets(env):
        text = text.replace(value, REDACTED)
    if not _MAYBE.search(text):
        return text
    text = _APPRISE_URL.sub(lambda m: redact_url(m.group()), text)
    for rx, repl in _PATTERNS:
        text = rx.sub(repl, text)
    return text
