"""The words by which an agent platform's own errors show in final text copied without structure:
phrases only a platform prints about itself (`PLATFORM_PHRASES`), which `rules.platform` looks
for before it reads which kind of error a line is.
"""

from __future__ import annotations

import re

__all__ = ["CONTEXT_LIMIT", "MUST_SET_KEY", "PLATFORM_PHRASES"]

CONTEXT_LIMIT = (
    r"context_length_exceeded|ContextWindowExceeded\w*|\bhas hit a token limit\b|\bexhausted context window\b|"
    r"\bexceeded (?:the )?(?:model's )?output (?:token )?limit\b|"
    r"\bmaximum context length\b|\bexceeds? the (?:available )?context (?:window|size|length)\b|"
    r"\bcontext (?:window|length) (?:exceeded|overflow)\b|\bprompt is too long\b|"
    r"\bcontext of [\d,.]+k? tokens exceeds the [\d,.]+k? token limit\b|"
    r"\bConversation too long\b"
)
"""The model's context or output tokens ran out: the request itself was too big (no person is
needed, and backing off does not help): an ordinary failed attempt, retried with less."""

MUST_SET_KEY = (
    r"\byou must (?:specify|set|provide) (?:the |an? |your )?[\w-]*(?:API[_ ]KEY|api key)\b"
)
"""No key to authenticate with: "you must specify the GEMINI_API_KEY environment variable"."""


PLATFORM_PHRASES = re.compile(
    r"\bRate limit reached for \S+ in organization\b|\brequires more credits\b|"
    r"\bdisabled by (?:your |the )?organization\w*|"
    r"Claude AI usage limit reached|\bAPI(?:Connection)?TimeoutError\b|\bcould not resolve authentication method\b|\bNo API key available\b|"
    r"\b(?:organization|account|workspace) has been (?:disabled|suspended|deactivated)\b|"
    r"\byour (?:request|account) has been (?:temporarily )?blocked\b|"
    r"\b(?:doesn['’]t|does not) serve your region\b|"
    r"\bunsupported_country_region_territory\b|\bCountry, region, or territory not supported\b|"
    r"\b(?:usage|session|weekly|daily|monthly|\d+-hour) limit (?:is |has been |was )?(?:reached|hit)|"
    # a loop runner's own budget of agent calls (ralph: "API call limit reached (100/100 calls")
    r"\b(?:API call|call|rate) limit (?:reached|hit|exceeded) \(\d+/\d+ calls\b|\bAPI call limit (?:reached|hit|exceeded)\b|"
    r"You['’]?ve hit your (?:usage |session |weekly |daily |monthly )?limit|Credit balance (?:is )?too low|"
    r"\b(?:run|ran|running) out of (?:funds|credits?)\b|"
    r"Invalid API key\s*·|\binsufficient (?:credits?|balance|funds)\b|\bServer error: \d{3}\b|"
    r"^(?:[\w-]+: )?(?:error: )?Connection failed\b|\bNetwork disconnected\b|\bhas disabled [^\n]{0,60}access\b|"
    r"\binvalid --api-key\b|^\d{3} No auth credentials|\bAPI (?:Streaming|Request) Failed\b|"
    r"\bAccess denied by policy\b|\b(?:do|does)(?: not|n['’]t) have access to (?:the )?model\b|"
    # an agent CLI's own error line: "codex: 401 Unauthorized (token refresh failed)"
    r"^(?:codex|claude|gemini|copilot|aider|cursor-agent|cline|roo|openhands)\W{1,3}(?:error\W{1,3})?"
    r"(?:40[13]\b|Unauthori[sz]ed|Forbidden)|\btoken refresh failed\b|"
    r"\bConnection to [\w-]+ (?:was )?lost\b|\bcheck your (?:network|internet)(?: connection)? and try again\b|"
    r"\byour request was rate-?limited\b|\byou['’]?ve hit (?:a|the) rate limit\b|"
    # an agent CLI's own error line: "Error: Rate limited. You have sent too many requests",
    # "Error: Authentication required. Your session has expired or was revoked."
    r"^\W{0,4}error\W{1,3}(?:rate[ -]?limited\b|authentication required\b|"
    r"your session has expired\b)|"
    r"\byou(?:['’]?ve| have) been rate[ -]?limited\b|\bError Code: rate_limited\b|"
    r"did not provide any assistant messages|\blast status: \d{3}\b|"
    # the account must change before the model answers at all
    r"\bmodel is not supported when using\b|\borganization must be verified\b|"
    + MUST_SET_KEY
    + r"|"
    r"Please run /login|OAuth token (?:has )?expired|stream disconnected before completion|"
    r"Quota exceeded for quota metric|\bRESOURCE_EXHAUSTED\b|\bReached max(?:imum)?[ _-]?(?:turns|iterations|loops)\b|"
    r"\b(?:quota|allowance)\b(?:[^\n.]|\.(?=\w)){0,60}?\b(?:is |are |still |remains |has been |was )+(?:exhausted|used up|gone)\b|"
    r"\b(?:daily |monthly |weekly )?quota exhausted\b|\bexceeded your current quota\b|"
    r"\berror_max_turns\b|\berror_during_execution\b|"
    r"\bAPI Error\b|\[API Error|\blitellm\.\w+Error\b|\b(?:overloaded|rate_limit|authentication|"
    r"permission|api)_error\b|\bunexpected status \d{3}\b|\bexceeded retry limit\b|"
    r"\bMax(?:imum)? session turns\b|\bmaximum number of turns\b|"
    r"\bmax(?:imum)? (?:iterations|loops) (?:reached|exceeded)\b|\breached maximum iteration\b|"
    r"\byou(?:['’]?ve| have) (?:hit|reached|exceeded) your\b[^\n]{0,40}\b(?:limit|quota)|"
    r"\byou(?:['’]?ve| have) exhausted (?:the |your |this )[\w'’ -]{0,30}\b(?:limit|quota)\b|"
    # a bare status line (`503 server is overloaded.`), an API's JSON error object
    r"^\W{0,3}5\d\d\b[^\n]{0,40}\b(?:overloaded|unavailable)\b|^\W{0,3}429 Too Many Requests\b|"
    r"^\W{0,3}40[13]\b[^\n]{0,30}\b(?:API key|access token|credentials)\b|\bIncorrect API key provided\b|\{\s*\"error\"\s*:\s*\{\s*\"message\"|"
    r"\byour (?:organization['’]s |account['’]s |plan['’]s )?[\w -]{0,30}\b(?:limit|quota|budget|credits?) "
    r"(?:has been |have been |was |is )?(?:reached|exceeded|exhausted|used up)|"
    r"\b(?:budget|quota) (?:has been |was )?exceeded|\bExceededBudget\b|\bover budget\b|"
    r"\bFailed to (?:log|sign) ?in\b|\bplease (?:log|sign) ?(?:out and (?:log|sign) ?)?in again\b|"
    r"\btoken could not be refreshed\b|\bplease set an auth method\b|"
    r"\bspecify one of the following environment variables\b|\bno (?:authentication|auth|credentials?)(?: credentials| information)? found\b|"
    r"\bno api keys? (?:were |was )?provided|--model and an --api-key|\bLLM Provider NOT provided|"
    r"\bExecution failed: \d{3}\b|\bModel call failed\b|^\W*Continue to iterate\?|\"type\"\s*:\s*\"error\"|"
    r"\bIt can continue to iterate\b|"
    # an HTTP status with its reason phrase, as a harness prints the API's answer (`got status:
    # 429 Too Many Requests.`)
    r"\bstatus(?: code)?:? (?:429 Too Many Requests|50[0234] (?:Internal Server Error|Bad Gateway|"
    r"Service Unavailable|Gateway Timeout))\b|" + CONTEXT_LIMIT,
    re.I,
)
"""Phrases only an agent platform prints about itself."""
