/**
 * `@mediaforge/client/webhooks` (Node): verifying what the service sends (docs/webhooks.md, the specification's 'Events'):
 *
 * - Task callbacks: `X-Webhook-Signature` = base64(HMAC-SHA256(secret, "<taskId>.<timestamp>.
 *   <sha256_hex(raw body)>")), `X-Webhook-Timestamp` in Unix seconds. The HMAC key is the account's
 *   webhook signing secret exactly as shown (the UTF-8 bytes of the whole string, `whsec_` prefix
 *   included). `<taskId>` is `data.taskId` (payload version 2) or `task_id` (version 1).
 * - Account endpoints: Standard Webhooks, verified by the `standardwebhooks` package.
 *
 * Both compare signatures in constant time and reject timestamps more than five minutes away.
 * Pass the raw bytes you received, never a re-serialized object.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError as StandardWebhookError } from 'standardwebhooks';
import { WebhookVerificationError } from './core/errors.js';
import type { AccountEvent, TaskCallbackBody, TaskCallbackBodyV1 } from './types.js';

export { WebhookVerificationError } from './core/errors.js';
export type { AccountEvent, TaskCallbackBody, TaskCallbackBodyV1 } from './types.js';

/** Headers as a fetch Headers, a Node IncomingHttpHeaders, or a plain record (any case). */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyTaskCallbackOptions {
  /** Largest accepted distance between the timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number | undefined;
  /** The current time in ms (tests). */
  now?: number | undefined;
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function rawBytes(rawBody: string | Uint8Array | ArrayBuffer): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  if (rawBody instanceof ArrayBuffer) return Buffer.from(rawBody);
  throw new WebhookVerificationError('pass the raw request body (string or bytes), not a parsed object');
}

/**
 * Verifies a task callback and returns its parsed body (payload version 2: the recordInfo envelope;
 * version 1: `{task_id, state, request_id, data}`). Throws WebhookVerificationError when the
 * signature is missing or wrong, the timestamp is stale or malformed, or the body is not JSON.
 */
export function verifyTaskCallback(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secret: string,
  options: VerifyTaskCallbackOptions = {},
): TaskCallbackBody | TaskCallbackBodyV1 {
  if (typeof secret !== 'string' || secret.length === 0)
    throw new WebhookVerificationError('the webhook signing secret is empty');
  const bytes = rawBytes(rawBody);
  const timestamp = header(headers, 'x-webhook-timestamp') ?? '';
  const signature = header(headers, 'x-webhook-signature') ?? '';
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed X-Webhook-Timestamp');
  if (signature === '') throw new WebhookVerificationError('missing X-Webhook-Signature');
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError(`stale X-Webhook-Timestamp: more than ${tolerance} s from now`);

  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  const record = body as { data?: { taskId?: unknown }; task_id?: unknown } | null;
  const taskId =
    typeof record?.data?.taskId === 'string'
      ? record.data.taskId
      : typeof record?.task_id === 'string'
        ? record.task_id
        : undefined;
  if (taskId === undefined) throw new WebhookVerificationError('the body names no task (data.taskId or task_id)');

  const bodyHash = createHash('sha256').update(bytes).digest('hex');
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${taskId}.${timestamp}.${bodyHash}`, 'utf8')
    .digest();
  // One signature is sent; space-separated candidates are each compared, in constant time.
  const matches = signature
    .trim()
    .split(/\s+/)
    .some((candidate) => {
      const given = Buffer.from(candidate, 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  if (!matches) throw new WebhookVerificationError('X-Webhook-Signature does not match');
  return body as TaskCallbackBody | TaskCallbackBodyV1;
}

/**
 * Verifies an account-endpoint delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, key = Base64-decoded part of the `whsec_` secret, either of two rotated
 * signatures accepted, five-minute tolerance) and returns the parsed event.
 */
export function verifyAccountEvent(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  whsecSecret: string,
): AccountEvent {
  const payload = rawBytes(rawBody).toString('utf8');
  const wanted = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
  const plain: Record<string, string> = {};
  for (const name of wanted) {
    const value = header(headers, name);
    if (value !== undefined) plain[name] = value;
  }
  try {
    const event = new Webhook(whsecSecret).verify(payload, plain) as AccountEvent | undefined;
    if (event === undefined) throw new WebhookVerificationError('the body is empty');
    return event;
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw error;
    const reason = error instanceof StandardWebhookError || error instanceof Error ? error.message : String(error);
    throw new WebhookVerificationError(`account event does not verify: ${reason}`, { cause: error });
  }
}
