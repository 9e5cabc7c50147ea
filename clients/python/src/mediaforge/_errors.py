"""Errors of the client. An answer that is not a success becomes an APIError subclass chosen by its
business code (docs/contracts.md): branch on the class or on ``.code``, never on the text. Every
APIError carries the request id (the envelope's ``request_id`` or the ``X-Request-Id`` header)."""

from __future__ import annotations

import builtins
import email.utils
import re
import time
from collections.abc import Mapping
from typing import Any

from ._generated.errors import ERROR_CODES


class MediaforgeError(Exception):
    """Base of every error this client raises."""


class APIError(MediaforgeError):
    """An error answer of the API. ``code`` is the five-digit business code (its first three digits
    are the HTTP status); an answer that is not an envelope (a proxy's page) gets status x 100."""

    status: int
    code: int
    msg: str
    request_id: str | None
    param: str | None
    data: Any
    headers: Mapping[str, str]

    def __init__(self, *, status: int, code: int, msg: str, request_id: str | None, data: Any, headers: Mapping[str, str]):
        suffix = f" (request {request_id})" if request_id else ""
        super().__init__(f"{status} {code}: {msg}{suffix}")
        self.status = status
        self.code = code
        self.msg = msg
        self.request_id = request_id
        self.data = data
        self.headers = headers
        param = data.get("param") if isinstance(data, dict) else None
        self.param = param if isinstance(param, str) else None

    @property
    def name(self) -> str | None:
        """The business code's name in spec/errors.yaml (``insufficient_credits``, ...)."""
        entry = ERROR_CODES.get(self.code)
        return entry[0] if entry else None


ApiError = APIError


class BadRequestError(APIError):
    """400xx: the request is malformed (see InvalidInputError for field problems)."""


class InvalidInputError(BadRequestError):
    """40001: the input breaks the model's published limits; ``fields`` lists every problem and
    ``param`` names the first field's path."""

    fields: list[dict[str, Any]]

    def __init__(self, **init: Any):
        super().__init__(**init)
        errors = init["data"].get("errors") if isinstance(init["data"], dict) else None
        self.fields = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
        if self.param is None and self.fields and isinstance(self.fields[0].get("path"), str):
            self.param = self.fields[0]["path"]


class AuthenticationError(APIError):
    """401xx: the API key is missing, malformed, unknown or revoked."""


class InsufficientCreditsError(APIError):
    """40201: the available balance does not cover the hold."""


class PermissionDeniedError(APIError):
    """403xx: the key may not do this."""


class NotFoundError(APIError):
    """404xx: unknown, or another key's or account's (indistinguishable by design)."""


class ConflictError(APIError):
    """409xx other than the ones below."""


class QuoteConflictError(ConflictError):
    """40901: the quote expired, is another key's, for another request or at another price."""


class IdempotencyConflictError(ConflictError):
    """40902 / 40903: the Idempotency-Key was used for a different request."""


class IdempotencyInProgressError(ConflictError):
    """40904: the first request with this Idempotency-Key has not finished; retried automatically."""


class PayloadTooLargeError(APIError):
    """413xx: the body is over the limit."""


class RateLimitError(APIError):
    """42901: rate limited; ``retry_after`` is the server's Retry-After in seconds."""

    retry_after: float | None

    def __init__(self, **init: Any):
        super().__init__(**init)
        self.retry_after = parse_retry_after(init["headers"].get("retry-after"))


class InternalServerError(APIError):
    """5xx: a fault of the service."""


class NotImplementedError(InternalServerError):  # noqa: A001 - mirrors the TypeScript client's name
    """50101."""


class ServiceUnavailableError(InternalServerError):
    """503xx: no deployment can serve it now, or the service is unavailable."""


class ConnectionError(MediaforgeError):  # noqa: A001
    """No HTTP answer: the connection failed or was cut."""


class TimeoutError(MediaforgeError, builtins.TimeoutError):  # noqa: A001
    """No answer within the call's time limit, or a wait ran out of time."""


class WebhookVerificationError(MediaforgeError):
    """A webhook that does not verify: bad or missing signature, stale timestamp, unparsable body."""


InsufficientCredits = InsufficientCreditsError
InvalidInput = InvalidInputError
RateLimited = RateLimitError

_BY_CODE: dict[int, type[APIError]] = {
    40001: InvalidInputError,
    40201: InsufficientCreditsError,
    40901: QuoteConflictError,
    40902: IdempotencyConflictError,
    40903: IdempotencyConflictError,
    40904: IdempotencyInProgressError,
    42901: RateLimitError,
    50101: NotImplementedError,
}
_BY_FAMILY: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: InsufficientCreditsError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
    501: NotImplementedError,
    503: ServiceUnavailableError,
}


def error_class_for(code: int, status: int) -> type[APIError]:
    """The class of an error answer, by business code first, then by HTTP status."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    family = code // 100 or status
    if family in _BY_FAMILY:
        return _BY_FAMILY[family]
    return InternalServerError if family >= 500 else APIError


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> APIError:
    """The error of a non-2xx answer, from its (possibly non-envelope) body."""
    envelope = body if isinstance(body, dict) and isinstance(body.get("code"), int) else None
    code = envelope["code"] if envelope else status * 100
    if envelope and isinstance(envelope.get("msg"), str):
        msg = envelope["msg"]
    elif isinstance(body, str) and 0 < len(body) < 300:
        msg = body
    else:
        msg = f"HTTP {status}"
    request_id = envelope.get("request_id") if envelope else None
    if not isinstance(request_id, str):
        request_id = headers.get("x-request-id")
    data = envelope.get("data") if envelope else None
    return error_class_for(code, status)(status=status, code=code, msg=msg, request_id=request_id, data=data, headers=headers)


_SECONDS = re.compile(r"^\d+(\.\d+)?$")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if _SECONDS.match(text):
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))
