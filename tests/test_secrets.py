"""Secrets by value: a password in a URL, a token in `--agent-cmd`, a provider key's value — never
in the store, the run's files, `config show` or an error; a resumed run still gets the real ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers import cli

from orchestrator.redaction import REDACTED, redact_text

TOKEN = "tok-5f1e2d3c4b5a69788796"
PROVIDER = "prov-key-0a1b2c3d4e5f60718293"

AGENT = f"""\
import pathlib, sys
args = sys.argv[1:]
assert f"--token={TOKEN}" in args, args            # the real value, on a resume too
prompt = pathlib.Path(args[-1]).read_text()
if "Use Redis" in prompt:                          # the human's answer is in the prompt
    pathlib.Path("cache.txt").write_text("redis")
    print("STATUS: completed")
else:
    print("STATUS: needs_human")
    print("Question: Which cache should I use?")
    print("A) Use Redis")
    print("B) Use memory")
"""
PLAN = "## Task 1.1: Pick a cache\n**Tests:**\n```bash\ntest -f cache.txt\n```\n"


def _no_secret_in(tmp: Path, *secrets: str) -> None:
    """Neither the store file nor any of the run's files holds SECRETS."""
    files = [tmp / "state.db", *(tmp / "runs").rglob("*")]
    for path in files:
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, (secret, path)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("postgresql://app:hunter2pw@db.example/prod", "hunter2pw"),
        ("my-agent --token=abc123def456 {prompt_file}", "abc123def456"),
        ("my-agent --api-key 'abc def 123' {prompt_file}", "abc def 123"),
        ("ANTHROPIC_API_KEY=zzz-999-yyy my-agent", "zzz-999-yyy"),
        ("curl -H 'Authorization: Bearer eyJhbGciOiJIUz' x", "eyJhbGciOiJIUz"),
        ("use sk-ant-api03-abcdefghijklmnopqrstuvwx", "sk-ant-api03-abcdefghijklmnopqrstuvwx"),
        ("push with ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_0123456789abcdefghijABCDEFGHIJ"),
        ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
        ("https://h/api?access_token=qqq111www&x=1", "qqq111www"),
    ],
)
def test_credentials_are_found_by_their_value(text: str, secret: str) -> None:
    out = redact_text(text, env={})
    assert secret not in out and REDACTED in out


def test_ordinary_text_is_left_alone() -> None:
    for text in (
        "my-agent --max-tokens 100 --prompt-file {prompt_file}",
        "sqlite:////home/u/.local/share/orchestrator/state.db",
        "https://user@example.com/repo.git",
        "python3 -m pytest -q tests/test_tokenizer.py",
        "my-agent --token {token}",
    ):
        assert redact_text(text, env={}) == text


def test_a_provider_keys_value_is_redacted_wherever_it_appears() -> None:
    env = {"OPENAI_API_KEY": PROVIDER, "MY_SERVICE_TOKEN": "svc-abcdefgh1234"}
    out = redact_text(f"agent --header X:{PROVIDER} --other svc-abcdefgh1234", env=env)
    assert PROVIDER not in out and "svc-abcdefgh1234" not in out


def test_a_token_in_agent_cmd_never_reaches_the_store_and_a_resume_gets_it_again(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text(AGENT.replace("{TOKEN}", TOKEN))
    (tmp_path / "plan.md").write_text(PLAN)
    cmd = f"{sys.executable} {tmp_path / 'agent.py'} --token={TOKEN} {PROVIDER} {{prompt_file}}"
    env = {"OPENAI_API_KEY": PROVIDER}
    first = cli(
        tmp_path, "run", "plan.md", "--agent", "command", "--agent-cmd", cmd, "--workdir", "w",
        "--no-wait", **env,
    )  # fmt: skip
    assert first.returncode == 3, first.stdout + first.stderr
    _no_secret_in(tmp_path, TOKEN, PROVIDER)
    shown = cli(tmp_path, "config", "show", "--json", ORCHESTRATOR_AGENT_CMD=cmd, **env)
    assert shown.returncode == 0, shown.stderr
    assert TOKEN not in shown.stdout and PROVIDER not in shown.stdout
    assert json.loads(shown.stdout)["settings"]["agent_cmd"]["value"].count(REDACTED) == 2
    [esc] = json.loads(cli(tmp_path, "escalations", "--json").stdout)
    assert cli(tmp_path, "answer", str(esc["id"]), "--option", "A").returncode == 0
    # the stored template lost its token: a plain resume says what to give again, records nothing
    before = (tmp_path / "state.db").read_bytes()
    plain = cli(tmp_path, "resume", **env)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert "agent_cmd held a secret" in plain.stderr and "--agent-cmd" in plain.stderr
    assert (tmp_path / "state.db").read_bytes() == before
    done = cli(tmp_path, "resume", "--agent-cmd", cmd, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "w" / "cache.txt").read_text() == "redis"
    _no_secret_in(tmp_path, TOKEN, PROVIDER)


def test_a_database_password_is_never_printed(tmp_path: Path) -> None:
    url = "postgresql://app:s3cretpw@127.0.0.1:1/nothing"
    for args in (("runs", "--db", url), ("escalations",), ("status",)):
        proc = cli(tmp_path, *args, ORCHESTRATOR_DB=url)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "s3cretpw" not in proc.stderr + proc.stdout and REDACTED in proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_bad_template_error_hides_its_token(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text(PLAN)
    proc = cli(
        tmp_path, "run", "plan.md", "--agent", "command", "--agent-cmd",
        f"my-agent --token={TOKEN} 'unclosed",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert TOKEN not in proc.stderr and REDACTED in proc.stderr


_PIECES = [
    "Step 12",
    " ",
    "\n",
    "=",
    "--",
    "-",
    ":",
    "@",
    "/",
    "'",
    '"',
    "sk-",
    "abcdefghijklmnopqrstuvwxyz",
    "0123456789",
    "password",
    "Token",
    "API_KEY",
    "auth",
    "Bearer ",
    "Basic ",
    "postgresql://",
    "tgram://",
    "ghp_",
    "AKIA",
    "AIza",
    "hf_",
    "xoxb-",
    "glpat-",
    "github_pat_",
    "{prompt_file}",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_the_quick_check_before_the_patterns_changes_nothing(text: str) -> None:
    """`redact_text` skips its patterns when none of their keywords is in the text: the result
    is always the one of every pattern run."""
    from orchestrator import redaction

    full = text
    full = redaction._APPRISE_URL.sub(lambda m: redaction.redact_url(m.group()), full)
    for rx, repl in redaction._PATTERNS:
        full = rx.sub(repl, full)
    assert redact_text(text, {}) == full
