#!/usr/bin/env bash
# Install the real agent CLIs (Codex, Gemini CLI, Aider) into the git-ignored .agents/ folder so the
# end-to-end adapter tests can run them against scripted local model servers. Idempotent and quiet:
# a second run with the pinned versions already present does nothing.
set -euo pipefail

CODEX_VERSION="0.169.0"
GEMINI_VERSION="0.61.0"
AIDER_VERSION="0.86.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
agents="$root/.agents"
mkdir -p "$agents"

have_npm_pkg() {  # $1 package, $2 version
    local pj="$agents/node_modules/$1/package.json"
    [[ -f "$pj" ]] && grep -q "\"version\": \"$2\"" "$pj"
}

if ! have_npm_pkg "@openai/codex" "$CODEX_VERSION" || ! have_npm_pkg "@google/gemini-cli" "$GEMINI_VERSION"; then
    if ! command -v npm >/dev/null; then
        echo "install-agents: npm not found; Codex and Gemini CLI tests will skip" >&2
    else
        [[ -f "$agents/package.json" ]] || echo '{"name": "orchestrator-agents", "private": true}' > "$agents/package.json"
        npm install --prefix "$agents" --no-fund --no-audit --loglevel=error --no-save \
            "@openai/codex@$CODEX_VERSION" "@google/gemini-cli@$GEMINI_VERSION" >/dev/null
    fi
fi

# Aider supports Python 3.10-3.12; prefer an interpreter already on the machine (pyenv shims may
# list versions that are not activated, so each candidate is actually run) over a uv download.
aider_python() {
    local candidates=(python3.12 python3.11)
    local pyenv_root
    pyenv_root="$(pyenv root 2>/dev/null || true)"
    if [[ -n "$pyenv_root" ]]; then
        candidates+=("$pyenv_root"/versions/3.12*/bin/python3.12 "$pyenv_root"/versions/3.11*/bin/python3.11)
    fi
    local c
    for c in "${candidates[@]}"; do
        if "$c" -c 'import sys; assert (3, 11) <= sys.version_info[:2] <= (3, 12)' 2>/dev/null; then
            command -v "$c" 2>/dev/null || echo "$c"
            return
        fi
    done
    echo 3.12  # let uv find or download one
}

export UV_TOOL_DIR="$agents/uv-tools" UV_TOOL_BIN_DIR="$agents/bin"
# The dist-info folder says which version is installed without paying aider's slow start-up.
if ! [[ -x "$agents/bin/aider" ]] || ! compgen -G "$agents/uv-tools/aider-chat/lib/python3.*/site-packages/aider_chat-$AIDER_VERSION.dist-info" >/dev/null; then
    if ! command -v uv >/dev/null; then
        echo "install-agents: uv not found; Aider tests will skip" >&2
    else
        uv tool install --quiet --force --python "$(aider_python)" "aider-chat==$AIDER_VERSION"
    fi
fi
