"""mediaforge: the Python client of the mediaforge API, sync and async, typed per model.

    from mediaforge import Mediaforge
    client = Mediaforge(api_key="sk-service-...", base_url="https://host")
    task = client.tasks.create_and_wait(model="vendor_d/family_d/text-to-video", input={"prompt": "..."})
"""

from . import webhooks
from ._client import AsyncMediaforge, Mediaforge
from ._errors import (
    ApiError,
    APIError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ConnectionError,
    IdempotencyConflictError,
    IdempotencyInProgressError,
    InsufficientCredits,
    InsufficientCreditsError,
    InternalServerError,
    InvalidInput,
    InvalidInputError,
    MediaforgeError,
    NotFoundError,
    NotImplementedError,
    PayloadTooLargeError,
    PermissionDeniedError,
    QuoteConflictError,
    RateLimited,
    RateLimitError,
    ServiceUnavailableError,
    TimeoutError,
    WebhookVerificationError,
    error_class_for,
)
from ._generated.errors import ERROR_CODES
from ._generated.models import MODEL_IDS, ModelId, ModelInput
from ._generated.schemas import Asset, CreditBalance, ModelSummary, PurgeResult, Quote, TaskRecord, TaskState, Statement, UsageReport
from ._pagination import AsyncPages, Page, Pages
from ._tasks import TERMINAL_STATES, Created, is_terminal
from ._version import __version__

Task = TaskRecord

__all__ = [
    "APIError", "ApiError", "Asset", "AsyncMediaforge", "AsyncPages", "AuthenticationError", "BadRequestError",
    "ConflictError", "ConnectionError", "Created", "CreditBalance", "ERROR_CODES", "IdempotencyConflictError",
    "IdempotencyInProgressError", "InsufficientCredits", "InsufficientCreditsError", "InternalServerError",
    "InvalidInput", "InvalidInputError", "MODEL_IDS", "Mediaforge", "MediaforgeError", "ModelId", "ModelInput",
    "ModelSummary", "NotFoundError", "NotImplementedError", "Page", "Pages", "PayloadTooLargeError",
    "PermissionDeniedError", "PurgeResult", "Quote", "QuoteConflictError", "RateLimitError", "RateLimited",
    "ServiceUnavailableError", "Statement", "TERMINAL_STATES", "Task", "TaskRecord", "TaskState", "TimeoutError", "UsageReport",
    "WebhookVerificationError", "__version__", "error_class_for", "is_terminal", "webhooks",
]
