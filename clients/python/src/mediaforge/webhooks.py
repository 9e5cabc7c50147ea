"""Verifying what the service sends (docs/webhooks.md):

- Task callbacks: ``X-Webhook-Signature`` = base64(HMAC-SHA256(secret, "<taskId>.<timestamp>.
  <sha256_hex(raw body)>")), ``X-Webhook-Timestamp`` in Unix seconds; the key is the account's
  signing secret exactly as shown (its UTF-8 bytes, ``whsec_`` prefix included).
- Account endpoints: Standard Webhooks (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``;
  key = the Base64-decoded part of the ``whsec_`` secret; either of two rotated signatures accepted).

Both compare in constant time and reject timestamps more than ``tolerance`` seconds (300) from now.
Pass the raw bytes received, never a re-serialized object.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, Union

from ._errors import WebhookVerificationError
from ._generated.schemas import TaskRecord, TaskState

__all__ = ["verify", "verify_task_callback", "verify_account_event", "WebhookVerificationError", "TaskCallbackBody", "TaskCallbackBodyV1", "AccountEvent"]


class TaskCallbackBody(TypedDict):
    """A task callback, payload version 2: the envelope and task record recordInfo returns."""

    code: int
    msg: str
    data: TaskRecord
    request_id: str
    """The delivery id, stable across retries of one delivery: dedupe on it."""


class TaskCallbackBodyV1(TypedDict):
    """A task callback, payload version 1 (older accounts)."""

    task_id: str
    state: TaskState
    request_id: str
    data: TaskRecord


class AccountEventData(TypedDict):
    object: TaskRecord


class AccountEvent(TypedDict):
    """An account-endpoint event (Standard Webhooks delivery)."""

    type: Literal["task.completed", "task.succeeded", "task.failed", "task.expired", "task.canceled"]
    timestamp: str
    data: AccountEventData


HeadersLike = Mapping[str, str]
Payload = Union[str, bytes, bytearray, memoryview]


def _header(headers: HeadersLike, name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _raw(payload: Payload) -> bytes:
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    raise WebhookVerificationError("pass the raw request body (str or bytes), not a parsed object")


def _fresh(timestamp: str, tolerance: float, now: float | None) -> None:
    if not re.fullmatch(r"\d{1,15}", timestamp):
        raise WebhookVerificationError("missing or malformed webhook timestamp")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError(f"stale webhook timestamp: more than {tolerance:g} s from now")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise WebhookVerificationError("the body is not JSON") from error


def verify_task_callback(payload: Payload, headers: HeadersLike, secret: str, *, tolerance: float = 300, now: float | None = None) -> TaskCallbackBody | TaskCallbackBodyV1:
    """Verifies a task callback and returns its body; WebhookVerificationError when it does not verify."""
    if not secret:
        raise WebhookVerificationError("the webhook signing secret is empty")
    raw = _raw(payload)
    timestamp = _header(headers, "x-webhook-timestamp") or ""
    signature = (_header(headers, "x-webhook-signature") or "").strip()
    _fresh(timestamp, tolerance, now)
    if not signature:
        raise WebhookVerificationError("missing X-Webhook-Signature")
    body = _json(raw)
    data = body.get("data") if isinstance(body, dict) else None
    task_id = data.get("taskId") if isinstance(data, dict) and isinstance(data.get("taskId"), str) else body.get("task_id") if isinstance(body, dict) else None
    if not isinstance(task_id, str):
        raise WebhookVerificationError("the body names no task (data.taskId or task_id)")
    digest = hashlib.sha256(raw).hexdigest()
    expected = hmac.new(secret.encode("utf-8"), f"{task_id}.{timestamp}.{digest}".encode(), hashlib.sha256).digest()
    if not any(hmac.compare_digest(_b64(candidate), expected) for candidate in signature.split()):
        raise WebhookVerificationError("X-Webhook-Signature does not match")
    result: TaskCallbackBody | TaskCallbackBodyV1 = body
    return result


def verify_account_event(payload: Payload, headers: HeadersLike, secret: str, *, tolerance: float = 300, now: float | None = None) -> AccountEvent:
    """Verifies a Standard Webhooks delivery of an account endpoint and returns the event."""
    raw = _raw(payload)
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp") or ""
    signatures = _header(headers, "webhook-signature") or ""
    if not message_id or not signatures:
        raise WebhookVerificationError("missing webhook-id or webhook-signature")
    _fresh(timestamp, tolerance, now)
    key = _b64(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    if not key:
        raise WebhookVerificationError("the secret is not a whsec_ Base64 key")
    expected = hmac.new(key, f"{message_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()
    for entry in signatures.split():
        version, _, value = entry.partition(",")
        if version == "v1" and hmac.compare_digest(_b64(value), expected):
            event: AccountEvent = _json(raw)
            return event
    raise WebhookVerificationError("webhook-signature does not match")


def verify(payload: Payload, headers: HeadersLike, secret: str, *, tolerance: float = 300, now: float | None = None) -> TaskCallbackBody | TaskCallbackBodyV1 | AccountEvent:
    """Either kind, told apart by its headers: Standard Webhooks (``webhook-signature``) or a task callback."""
    if _header(headers, "webhook-signature") is not None:
        return verify_account_event(payload, headers, secret, tolerance=tolerance, now=now)
    return verify_task_callback(payload, headers, secret, tolerance=tolerance, now=now)


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return b""
