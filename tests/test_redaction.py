"""Secrets never reach logs, run stores or reports: redact() and redact_obj()."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowgap import redaction
from knowgap.redaction import _SECRET_ENV, MASK, redact, redact_obj


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No secret-looking variables from the real environment (so the tests see only their own)."""
    for name in list(os.environ):
        if _SECRET_ENV.search(name):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "MY_SERVICE_TOKEN", "DB_PASSWORD",
                                  "AWS_SECRET_ACCESS_KEY", "gh_token"])
def test_secret_env_values_are_removed(clean_env: pytest.MonkeyPatch, name: str) -> None:
    secret = "zq81-Plain-Value-77"
    clean_env.setenv(name, secret)
    out = redact(f"connect failed with {secret} (retry {secret})")
    assert secret not in out
    assert out == f"connect failed with {MASK} (retry {MASK})"


def test_other_env_values_and_short_values_are_kept(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MY_SERVICE_URL", "plainvalue123")
    clean_env.setenv("SHORT_TOKEN", "abc12")  # under 6 characters: too common to mask
    assert redact("plainvalue123 and abc12") == "plainvalue123 and abc12"


def test_longest_secret_value_is_removed_whole(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("A_TOKEN", "prefix-secret")
    clean_env.setenv("B_TOKEN", "prefix-secret-and-more")
    assert redact("x prefix-secret-and-more y") == f"x {MASK} y"


@pytest.mark.parametrize("text", [
    "Authorization: Bearer abcdefgh12345678.XYZ-~+/==",
    "authorization: bearer abcdefgh12345678",
    "request failed: BEARER  Zm9vYmFyYmF6cXV4",
])
def test_bearer_tokens(clean_env: pytest.MonkeyPatch, text: str) -> None:
    out = redact(text)
    token = text.split()[-1]
    assert token not in out
    assert MASK in out
    assert "bearer" in out.lower()


@pytest.mark.parametrize(("text", "expected"), [
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {MASK}"),
    ("Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Proxy-Authorization: Basic {MASK}"),
    ("authorization=Token abcdef1234567", f"authorization=Token {MASK}"),
    ("Authorization: Bearer abcdefgh12345678", f"Authorization: Bearer {MASK}"),
    ('{"authorization": "Bearer abcdefghijk"}', f'{{"authorization": "Bearer {MASK}"}}'),
])
def test_authorization_header_credentials(clean_env: pytest.MonkeyPatch, text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("key", [
    "sk-abcdefghij0123456789",
    "sk-proj-AbCdEfGh_ijkl-MNOP1234",
    "sk-ant-api03-abcdefghijklmnop",
    "pk-live0123456789",
    "rk-test_abcdefgh",
])
def test_api_key_shapes(clean_env: pytest.MonkeyPatch, key: str) -> None:
    out = redact(f"invalid key {key} for model")
    assert key not in out
    assert out == f"invalid key {MASK} for model"


def test_url_credentials(clean_env: pytest.MonkeyPatch) -> None:
    out = redact("cannot reach https://alice:hunter2-pw@proxy.example.com:8443/v1/chat")
    assert "alice" not in out and "hunter2-pw" not in out
    assert out == f"cannot reach https://{MASK}@proxy.example.com:8443/v1/chat"


@pytest.mark.parametrize(("text", "secret", "kept"), [
    ("GET https://api.example.com/v1/models?api_key=abcdef123456&page=2", "abcdef123456", "&page=2"),
    ("GET https://api.example.com/v1/models?apikey=abcdef123456", "abcdef123456", "?apikey="),
    ('{"api_key": "abcdef123456", "model": "m"}', "abcdef123456", '"model": "m"'),
    ("x-api-key: abcdef123456\nhost: h", "abcdef123456", "host: h"),
    ("callback?access_token=abcdef123456 done", "abcdef123456", " done"),
])
def test_key_value_pairs(clean_env: pytest.MonkeyPatch, text: str, secret: str, kept: str) -> None:
    out = redact(text)
    assert secret not in out
    assert MASK in out
    assert kept in out


@pytest.mark.parametrize("text", [
    "The library closes at 20:00 on weekdays; members may borrow up to 12 items.",
    "A risk-free, task-oriented desk-based review: the key point is the 45 euro fee.",
    "Token budget: 512 tokens per answer; see https://example.com/docs/v1/chat?page=2&lang=en",
    "Write to support@example.com or call +49 30 1234567.",
    "青湖社区卫生服务中心工作日下午五点半关门，押金7个工作日内退还。",
    'JSON: {"answer": "two years", "confidence": 0.9}',
    "http://127.0.0.1:8000/v1 answered HTTP 503",
    "",
])
def test_ordinary_text_is_untouched(clean_env: pytest.MonkeyPatch, text: str) -> None:
    assert redact(text) == text


def test_redact_obj_nested(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("SERVICE_PASSWORD", "pa55word-xyz")
    obj = {
        "error": "HTTP 401 with Bearer abcdefgh12345678",
        "nested": {"url": "https://u:pa55word-xyz@host/v1", "items": ["sk-abcdefghijkl", 3, None, True],
                   "pair": ("api_key=abcdef123456", 1.5)},
        "count": 7,
        "text": "plain text stays",
    }
    out = redact_obj(obj)
    assert out == {
        "error": f"HTTP 401 with Bearer {MASK}",
        "nested": {"url": f"https://{MASK}@host/v1", "items": [MASK, 3, None, True],
                   "pair": [f"api_key={MASK}", 1.5]},
        "count": 7,
        "text": "plain text stays",
    }
    assert obj["nested"]["items"][0] == "sk-abcdefghijkl"  # the input is not modified


def test_redact_obj_scalars(clean_env: pytest.MonkeyPatch) -> None:
    assert redact_obj(5) == 5
    assert redact_obj(None) is None
    assert redact_obj("sk-abcdefghijkl") == MASK


@pytest.mark.parametrize(("text", "expected"), [
    ("openai-compat:m@http://u:KEYVALUE99@host/v1", f"openai-compat:m@http://{MASK}@host/v1"),
    ("openai-compat:m@https://tok3n-only-value@host/v1", f"openai-compat:m@https://{MASK}@host/v1"),
    # a reference to an environment variable is how a spec keeps the secret out of files: it stays
    ("openai-compat:m@http://u:${PROXY_PW}@host/v1", "openai-compat:m@http://u:${PROXY_PW}@host/v1"),
    ("openai-compat:m@http://${PROXY_TOKEN}@host/v1", "openai-compat:m@http://${PROXY_TOKEN}@host/v1"),
    ("openai-compat:m@http://u:pre${PROXY_PW}@host/v1", f"openai-compat:m@http://{MASK}@host/v1"),
    ("org/m@v2 at http://host/v1", "org/m@v2 at http://host/v1"),
])
def test_url_userinfo_in_specs(clean_env: pytest.MonkeyPatch, text: str, expected: str) -> None:
    assert redact(text) == expected


# The patterns as they were before redact() found the key shapes from their literal "k-" and ran the credential
# pattern only on texts holding one of its words (2026-12-05): every text must come out the same.
_OLD_PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*"),
    re.compile(r"\b(?:sk|pk|rk)-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization|access_token)[\"']?\s*[:=]\s*[\"']?"
               r"(?:(?:bearer|basic|token|digest)\s+)?)(?!(?:bearer|basic|token|digest)\s)[^\s\"',}&]{6,}"),
]


def _old_redact(text: str) -> str:
    for pattern in _OLD_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + MASK, text)
        else:
            text = pattern.sub(MASK, text)
    return redaction._URL_USERINFO.sub(redaction._mask_userinfo, text)


_PIECES = st.sampled_from([
    "sk-", "pk-", "rk-", "k-", "ask-", "risk-", "work-", "_sk-", "ésk-", "sk-ant-", "sk-proj-", "abcdefgh",
    "AbC_12-x", "API_KEY", "x-api-key", "apiKey", "Api-Key", "Authorization", "ACCESS_TOKEN", "Bearer ",
    "Basic ", "token ", ": ", "=", '"', "'", " ", "\n", ",", "é", "中文", "k", "s", "-", "12345678",
    "https://", "u:pw@", "host/v1", "@", "${X_TOKEN}",
    # non-ASCII that leaves a text mostly ASCII (its triggers are then looked for in its UTF-8 bytes), and the
    # KELVIN SIGN, which lower-cases to an ASCII k that the case-insensitive patterns match
    "\u2019", "\u201cquoted\u201d", "the policy text of a long prompt, ", "\u212a", "API\u212aEY", "\u0130",
])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_redact_masks_what_the_patterns_match(clean_env: pytest.MonkeyPatch, text: str) -> None:
    assert redact(text) == _old_redact(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("risk-sk-abcdefghij", f"risk-{MASK}"),  # the first "k-" is no key; the one after it is
    ("ask-abcdefghij and sk-abcdefghij", f"ask-abcdefghij and {MASK}"),
    ("_sk-abcdefghij sk-abc", "_sk-abcdefghij sk-abc"),  # a word character before; a tail under 8
    ("sk-abcdefghij-sk-abcdefghij", MASK),  # one run of key characters is one key
    ("Api-Key: abcdef123456", f"Api-Key: {MASK}"),
    ("a capital, rapid, work-related, check-in text", "a capital, rapid, work-related, check-in text"),
])
def test_key_shapes_and_credential_words(clean_env: pytest.MonkeyPatch, text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "the policy text of a long prompt, \u2019 API\u212aEY: abcdef123456 and more of it " * 4,  # KELVIN SIGN k
    "the policy text of a long prompt, \u2019\u2019 Authorization: Bearer abcdefghijkl more " * 4,
    "x\u2019 https://user:pw@host/v1 and sk-abcdefghijkl in the policy text of a long prompt " * 4,
    "\u4e2d\u6587\u7684\u653f\u7b56 api_key=abcdef123456 \u4e2d\u6587" * 4,  # mostly Chinese: scanned as a str
])
def test_texts_mostly_ascii_or_not_are_redacted_as_before(clean_env: pytest.MonkeyPatch, text: str) -> None:
    assert redact(text) == _old_redact(text) != text
