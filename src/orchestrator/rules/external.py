"""External-service trouble (seed 004): auth, quota and network failures of a *remote* service,
which no retry by the agent can fix — one table for the interpreter, the brain and the agent
adapters.

A status code alone proves nothing — agents write docs about 401s and tests that expect 429s.
A hit needs an error shape (a status with an error word, an error code, a failed connection)
and, for generic codes, evidence of a remote party nearby (a host name, a non-local IP, a
service name). Anything aimed at localhost is the agent's own test server, not a remote service.

A model-API error an agent CLI reports (its own provider: always remote) only needs its kind:
`service_error_kind` reads it from the message, the HTTP status or the SDK's error code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from orchestrator.rules.failure import DOC_ENTRY, QUOTED_MESSAGE_ITEM

__all__ = [
    "ERROR_CODE_KINDS",
    "MESSAGE_KINDS",
    "STATUS_KINDS",
    "external_line",
    "external_trouble",
    "remote_access_request",
    "service_error_kind",
]

# inherently about a remote service / credentials: no further evidence needed
_SELF_EVIDENT = re.compile(
    r"getaddrinfo\s+(?:ENOTFOUND|EAI_AGAIN)|\bENOTFOUND\b|\bEAI_AGAIN\b|Could not resolve host|"
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
    r"insufficient_quota|exceeded your current quota|RESOURCE_EXHAUSTED|ResourceExhausted|"
    r"\bQuota exceeded\b|quota metric|\bExpiredToken\b|security token included in the request is expired|"
    r"InvalidAccessKeyId|SignatureDoesNotMatch|invalid[_ ]api[_ ]key|Invalid API Key|"
    r"API[- ]key\b[^.\n]{0,30}\b(?:expired|invalid|revoked|not authori[sz]ed|abgelaufen|ungültig)|"
    r"npm (?:ERR!|error) code E40[13]|Unable to authenticate|Bad credentials|"
    r"You must be logged in to the server|\bapi_key_expired\b|\bExpired API Key provided\b|"
    r"\bACCOUNT_(?:DEACTIVATED|DISABLED|SUSPENDED)\b|\bGatedRepoError\b|"
    r"authentication token seems to be invalid|INVALID_AUTHENTICATION|"
    r"doesn'?t resolve|does not resolve|DNS (?:lookup|resolution) fail|RateLimitError|rate_limit_error|"
    r"has rate limited you|\bAPI Error:? 529\b|\b529 Overloaded\b|\boverloaded_error\b|"
    # an account a person must put right: billing off, payments failed, an agreement to accept
    r"\bmust enable billing\b|\benable billing (?:on|for) (?:the|your|this)\b|"
    # a git host refusing the push for a rule or a scope only the repository's admins can change
    r"\bGH006\b|\bProtected branch update failed\b|\bprotected branch hook declined\b|"
    r"\brefusing to allow an? (?:GitHub App|Personal Access Token|OAuth App)\b|"
    # a registry or cloud CLI with no login for it: "no token found for `acme`, please run
    # `cargo login --registry acme`"
    r"\bno (?:token|credentials?|auth token) found for\b|"
    r"\bplease run [`'\"]?(?:cargo|npm|pnpm|yarn|docker|gh|az|gcloud|aws|heroku|fly|flyctl|vercel|"
    r"netlify|firebase) (?:auth )?login\b|"
    # GitHub refusing an app's token a permission it was not granted
    r"\bResource not accessible by (?:integration|personal access token)\b|"
    # a remote API or sandbox gone for good
    r"\b410\b[^.\n]{0,20}\bGone\b[^.\n]{0,12}\bfor url\b|"
    r"\b(?:API|endpoint|version|sandbox|service|v\d+)\b[^.\n]{0,40}\bhas been "
    r"(?:retired|decommissioned|shut down|sunset)\b|"
    r"\bbilling (?:account\b[^.\n]{0,60}?\b)?(?:is |has been |was )?(?:disabled|not (?:found|enabled|active)|closed|"
    r"suspended)\b|\bBILLING_DISABLED\b|\bbilling must be enabled\b|\bpayments have failed\b|"
    r"\b(?:accept|sign) the (?:latest |updated |new )?(?:[\w-]+ ){0,3}agreement\b|\blookup \S+(?:: | )no such host\b|\bno such host\b",
    re.I,
)
# needs a remote party nearby
_NEEDS_REMOTE = re.compile(
    r"\b40[13]\b[^\n]{0,40}\b(?:Unauthori[sz]ed|Forbidden|Client Error)|\b(?:Unauthori[sz]ed|Forbidden)\b|"
    r"(?:HTTP|status(?: code)?|Status|error|Error|returned|responded(?: with)?|answers?|->|=>|code:?)\W{0,3}\s*40[13]\b|"
    r"AuthenticationError|PermissionDenied|PERMISSION_DENIED|Permission to \S+ denied|not authori[sz]ed|"
    r"(?<!Unexpected )(?<!unexpected )(?:token|key|credentials?|(?-i:[A-Z][A-Z0-9_]*PASSWORD))\b[^.\n]{0,30}\b(?:has |have |is |are |was |were )?(?:expired|revoked|rejected|"
    r"invalid|incorrect|rolled|not valid|no longer valid|ungültig)|"
    r"\b(?:expired|revoked|invalid)\s+(?:API\s+|access\s+|auth\s+)?(?:key|token|credentials?)\b|"
    r"\b429\b|Too Many Requests|rate[ _-]?limit(?:ed)?\b[^.\n]{0,20}\b(?:exceeded|reached|hit)|"
    r"(?:exceed(?:ed|s)?|hit|reached)\b[^.\n]{0,20}\brate[ _-]?limit|rate_limit_exceeded|quota\b[^.\n]{0,20}(?:exceeded|"
    r"exhausted|used up)|"
    r"ECONNREFUSED|Connection refused|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Network is unreachable|"
    r"network (?:is )?unreachable|connect(?:ion)? timed out|Failed to establish a new connection|"
    r"CERTIFICATE_VERIFY_FAILED|certificate verify failed|unreachable(?!\s+(?:code|statements?|branch|pattern))|nicht erreichbar|Verbindung abgelehnt|"
    r"ConnectTimeout|ReadTimeout|ConnectionError|Max retries exceeded|can(?:no|')t reach|could(?:n't| not) reach|"
    r"certificate (?:has )?expired|Access denied|access is denied|"
    # a database refusing the login it was given (PostgreSQL, MySQL, SQL Server)
    r"\bauthentication failed for user\b|\bLogin failed for user\b|"
    r"\b50[0234]\b\W{0,3}(?:Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out)|"
    r"status page|\boutage\b|\bfirewall\b|\ballow ?list\b|\b(?:dns|http) block\b|"
    r"\b(?:project|account|instance|database|workspace) (?:is|has been) (?:paused|suspended)\b|"
    # es, pt, fr: the registry's token expired ("El token del registro … caducó")
    r"\btoken\b[^.\n]{0,60}\b(?:caduc[óo]|expir[óo]|expirou|a expiré|expiré)\b|"
    r"\bSERVICE_UNAVAILABLE\b|\b(?:undergoing|is in|under) (?:scheduled |planned )?maintenance\b|"
    # no way to authenticate to it from here: "HTTPS authentication isn't configured in this environment"
    r"\b(?:authentication|auth|credentials?|access tokens?|api keys?)\b[^.\n]{0,80}?\b(?:isn't|is not|aren't|are not|"
    r"not|wasn't|weren't)\s+(?:configured|set up|set|available|present|provided)\b|"
    # no key at all where one is needed: "No provider has a key configured"
    r"\bno (?:\w+ )?(?:provider|service|account) has an? (?:API )?key\b",
    re.I,
)
_LOCAL = re.compile(
    r"localhost|127\.0\.0\.\d+|0\.0\.0\.0|\[::1\]|::1\b|host\.docker\.internal", re.I
)
_FILE_EXT = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|json|md|txt|yaml|yml|toml|lock|sql|rb|go|rs|css|scss|html|sh|env|cfg|"
    "ini|log|csv|xml|java|kt|swift|c|h|cpp|hpp|o|so|whl|gz|tar|zip|ex|exs|gd|php|vue|svelte|lua|dart|"
    "tf|proto|graphql|gql|ipynb|spec|test|d|map|min|pdf|png|jpg|svg|conf|pem|key|crt|bak|orig|patch|diff|"
    "service|rst|adoc|tmpl|j2|erb|mdx|xlsx|ods"
)
_HOST = re.compile(
    rf"\b(?:https?://)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?!(?:{_FILE_EXT})\b)[a-z]{{2,}}\b",
    re.I,
)
_URL = re.compile(r"\bhttps?://([^/\s:'\"]+)", re.I)
_IP = re.compile(r"\b(?!127\.)(?!0\.0\.0\.0)\d{1,3}(?:\.\d{1,3}){3}\b")
_SERVICE = re.compile(
    r"\b(?:stripe|github|gitlab|bitbucket|openai|anthropic|aws|s3|gcp|google|azure|twilio|sendgrid|mailgun|"
    r"slack|firebase|supabase|vercel|netlify|heroku|cloudflare|sentry|datadog|shopify|paypal|salesforce|"
    r"hubspot|auth0|okta|crm|erp|sandbox|registry|upstream|third[- ]party|partner|vendor|provider|"
    r"marketplace|remote|registro|registre|geocoding|saas|webhook receiver|api\.\w+|external (?:api|service)|figma|jira|atlassian|"
    r"confluence|notion|linear|asana|trello|zendesk|intercom|segment|mixpanel|amplitude|algolia|contentful|"
    r"docker hub|npmjs|pypi|hugging ?face|cloudinary|mapbox|gcloud|IAM|"
    r"(?:the|their|its|from|external|remote|partner|vendor|provider'?s?)\s+API|Versand-API|Partner\w*)\b",
    re.I,
)
_NOT_ERROR = re.compile(
    r"\bassert(?:s|ed|ing|ions?)?\b|\bexpect(?:ed)?\b\W*\d{3}|\bshould (?:return|respond)|"
    # code that deals with such errors, described: "Catches asyncssh exceptions (`PermissionDenied` → 401)"
    r"\bcatch(?:es|ing)?\b|\bhandl(?:e|es|ed|ing)\b|"
    # the agent telling what it added: "Added `ERROR_QUOTA_EXCEEDED` (HTTP 429) to the table"
    r"^\W*(?:I(?:['’]ve| have)?\s+)?(?:added|implemented|introduced|mapped|wired)\s+(?!a retry\b)|"
    r"\brespond(?:s|ing)?(?: with)? \d{3}\b|\brespond(?:s)? with\b|\|\s*\d{3}\s*\||\bretries on\b|\bretr(?:y|ies|ying)(?: on| a| the)? \d{3}\b|\brate limit exceeded for (?:client|key|tenant|user|ip)\b|\btreated as\b|\bif you see\b|\bmeans you\b|"
    # a row of a markdown table: a catalogue of errors, not one that happened
    r"^\s*\|[^|\n]*\|[^|\n]*\||"
    # a heading of a document about errors ("## Symptom: `API Error: 529`"), an entry of a runbook
    # ("… billing errors. Action: rotate the key"), code honouring a header on "429/503 responses"
    + DOC_ENTRY
    + r"|\bhono(?:u)?r(?:s|ing)?\b|\bon \d{3}(?:/\d{3})+ responses\b|"
    # a list of quoted messages with their fixes: "- `FATAL: quota exceeded` → ask an admin"
    + r"(?:^|\s)"
    + QUOTED_MESSAGE_ITEM,
    re.I,
)


_NAMED_API = re.compile(
    r"\b[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?\s+(?:API|Sandbox|sandbox|Portal|Console)\b"
)


def _has_remote(text: str) -> bool:
    if _NAMED_API.search(text):
        return True
    if _URL.search(text):
        hosts = [h for h in _URL.findall(text) if not _LOCAL.search(h)]
        if hosts:
            return True
    if _IP.search(text):
        return True
    for m in _HOST.finditer(text):
        h = m.group(0).lower()
        if _LOCAL.search(h) or re.fullmatch(r"[\w-]+\.(?:" + _FILE_EXT + r")", h):
            continue
        if re.search(r"\b(?:e\.g|i\.e|etc|vs)\b", h):
            continue
        return True
    return bool(_SERVICE.search(text))


def external_trouble(units: Sequence[str]) -> str | None:
    """The unit (a line, or a prose paragraph) showing an auth, quota or network failure of a
    remote service, or None. Neighbouring units count as context for the remote party."""
    for k, text in enumerate(units):
        self_evident = _SELF_EVIDENT.search(text)
        generic = _NEEDS_REMOTE.search(text)
        if not (self_evident or generic):
            continue
        if _LOCAL.search(text) or _NOT_ERROR.search(text):
            continue
        if self_evident:
            return text.strip()[:300]
        if _LOCAL.search("\n".join(units[max(0, k - 1) : k + 2])):
            continue
        if _has_remote("\n".join(units[max(0, k - 3) : k + 4])):
            return text.strip()[:300]
    return None


_ACCESS = re.compile(
    r"\b(?:(?:personal |API |auth(?:entication)? |access |bearer |OAuth )tokens?|api[ _-]?keys?|access keys?|"
    r"credentials|ssh keys?|secret keys?|service account|(?-i:[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:API_KEY|KEY|TOKEN|SECRET)\b)|(?:remote|repository|repo) URL|URL of (?:your|the) \w+ "
    r"repo(?:sitory)?|production (?:database|db|server|environment|project|instance))\b",
    re.I,
)
_SUPPLY = re.compile(
    r"(?:^(?:\W|\d+[.)]|Step \d+:)*\s*|\b(?:please|could you|can you|would you|you(?:['’]ll| will)? need to|"
    r"you (?:must|should)|need you to|we need to|I need you to)\s+(?:please\s+)?)"
    r"(?:provide|set(?:ting)? up|set|get|obtain|generate|create|add|export|share|give|paste|send|renew|"
    r"rotate|configure|run|apply|grant|enable)\b",
    re.I,
)
"""A request for the user to do it: an imperative, or `please` / `could you` / `you'll need to`."""


def remote_access_request(text: str) -> str | None:
    """The sentence of the agent's final words that asks the user to supply or use access to a
    remote service only the user has (a token, a key, the remote URL, the production database),
    when the text also names that remote party; else None. For a question already read as one
    for a person."""
    sents = [x for x in re.split(r"(?<=[.?!:])\s+|\n+", text) if x.strip()]
    for k, sentence in enumerate(sents):
        # the request, and the access it is about in it or just before ("… needs X. Could you add it?")
        about = sentence if _ACCESS.search(sentence) else sents[k - 1] if k else ""
        if (
            _ACCESS.search(about)
            and _SUPPLY.search(sentence)
            and not _LOCAL.search(f"{about} {sentence}")
            and _has_remote(text)
        ):
            return (
                f"{about} {sentence}".strip()[:300] if about != sentence else sentence.strip()[:300]
            )
    return None


def external_line(text: str) -> str | None:
    """`external_trouble` over the lines of a failure text (an attempt's error summary)."""
    return external_trouble([line for line in text.splitlines() if line.strip()])


# -- model-API errors of an agent CLI ------------------------------------------------------------
MESSAGE_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "quota",
        re.compile(
            r"insufficient_quota|exceeded your current quota|quota exceeded|usage limit|"
            r"RESOURCE_EXHAUSTED.*quota|quota.*RESOURCE_EXHAUSTED|billing|credit balance",
            re.I,
        ),
    ),
    (
        "authentication",
        re.compile(
            r"\b401\b|unauthori[sz]ed|UNAUTHENTICATED|invalid[_ ]api[_ ]key|incorrect api key|"
            r"api key not valid|AuthenticationError|not able to authenticate",
            re.I,
        ),
    ),
    ("permission", re.compile(r"\b403\b|forbidden|PERMISSION_DENIED|PermissionDeniedError", re.I)),
)
"""A model-API error message → its kind, first match wins."""

STATUS_KINDS: dict[int, str] = {
    401: "authentication",
    402: "billing",
    403: "permission",
    429: "rate limit",
}
"""A model API's HTTP status → the kind of trouble (Claude Code reports `api_error_status`)."""

ERROR_CODE_KINDS: dict[str, str] = {
    "authentication_failed": "authentication",
    "billing_error": "billing",
    "rate_limit": "rate limit",
}
"""The Claude Agent SDK's assistant-message `error` codes → the kind of trouble."""


def service_error_kind(
    message: str | None = None, *, status: int | None = None, error_code: str | None = None
) -> str | None:
    """The kind (`authentication`, `permission`, `quota`, `billing`, `rate limit`) of a model-API
    error only a person can fix, from its HTTP status, SDK error code or message; else None.

    >>> service_error_kind("Error: 401 Unauthorized"), service_error_kind(status=429)
    ('authentication', 'rate limit')
    """
    if status is not None and status in STATUS_KINDS:
        return STATUS_KINDS[status]
    if error_code is not None and error_code in ERROR_CODE_KINDS:
        return ERROR_CODE_KINDS[error_code]
    for kind, pattern in MESSAGE_KINDS if message else ():
        if pattern.search(message or ""):
            return kind
    return None
