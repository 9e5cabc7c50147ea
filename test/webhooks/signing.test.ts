import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../runtime/accounts/accounts.js';
import { eventFor, parseEvents } from '../../runtime/webhooks/events.js';
import {
  endpointSignatureHeader,
  newEndpointSecret,
  signCallback,
  signEndpoint,
} from '../../runtime/webhooks/signing.js';
import { verifyCallback } from './support.js';

describe('Standard Webhooks signatures', () => {
  const body =
    '{"type":"task.succeeded","timestamp":"2026-01-01T00:00:00.000Z","data":{"object":{"taskId":"task_1","note":"ü €"}}}';
  const now = Math.floor(Date.now() / 1000);

  it('match the standardwebhooks package (sign and verify)', () => {
    const secret = newEndpointSecret();
    const ours = signEndpoint(secret, 'dlv_1', now, body);
    expect(ours).toBe(new Webhook(secret).sign('dlv_1', new Date(now * 1000), body));
    expect(
      new Webhook(secret).verify(body, {
        'webhook-id': 'dlv_1',
        'webhook-timestamp': String(now),
        'webhook-signature': ours,
      }),
    ).toEqual(JSON.parse(body));
  });

  it('use the Base64-decoded key after whsec_, not the secret string', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(signEndpoint(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('send two space-separated signatures during a rotation; either verifies', () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const header = endpointSignatureHeader([current, previous], 'dlv_2', now, body);
    expect(header.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'dlv_2', 'webhook-timestamp': String(now), 'webhook-signature': header };
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(newEndpointSecret()).verify(body, headers)).toThrow(/No matching signature/);
  });
});

describe('task callback signature', () => {
  it('is base64(HMAC-SHA256(secret, "<taskId>.<timestamp>.<sha256_hex(raw body)>")), checked by an independent implementation', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({
      code: 200,
      msg: 'success',
      data: { taskId: 'task_abc', state: 'succeeded', text: 'naïve' },
      request_id: 'dlv_x',
    });
    const timestamp = 1767225600;
    const signature = signCallback(secret, 'task_abc', timestamp, body);
    expect(signature).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const headers = { 'x-webhook-timestamp': String(timestamp), 'x-webhook-signature': signature };
    expect(verifyCallback(secret, headers, body)).toBe(true);
    expect(verifyCallback(secret, { ...headers, 'x-webhook-timestamp': String(timestamp + 1) }, body)).toBe(false);
    expect(verifyCallback(secret, headers, `${body} `)).toBe(false);
  });

  it('keys the HMAC with the whole secret string (whsec_ prefix included)', () => {
    // Fixed vector, computed with openssl: printf '%s' "task_1.1700000000.$(printf '{}' | sha256sum | cut -d' ' -f1)" | openssl dgst -sha256 -hmac whsec_test -binary | base64
    expect(signCallback('whsec_test', 'task_1', 1700000000, '{}')).toBe('ruQ5pGvnTRj7XosDY5sUHRzinNMftvPb9fkCiVDlDL0=');
  });
});

describe('events', () => {
  it('validates and deduplicates the event list', () => {
    expect(parseEvents('task.succeeded, task.failed,task.succeeded')).toEqual(['task.succeeded', 'task.failed']);
    expect(parseEvents('task.completed,task.expired,task.canceled')).toEqual([
      'task.completed',
      'task.expired',
      'task.canceled',
    ]);
    expect(() => parseEvents('task.created')).toThrow(/unknown event task\.created/);
    expect(() => parseEvents(' , ')).toThrow(/at least one/);
  });

  it('picks the specific event when subscribed, else task.completed for the three terminal outcomes', () => {
    expect(eventFor(['task.succeeded'], 'succeeded')).toBe('task.succeeded');
    expect(eventFor(['task.completed', 'task.failed'], 'failed')).toBe('task.failed');
    expect(eventFor(['task.completed'], 'expired')).toBe('task.completed');
    expect(eventFor(['task.completed'], 'canceled')).toBeUndefined();
    expect(eventFor(['task.canceled'], 'canceled')).toBe('task.canceled');
    expect(eventFor(['task.failed'], 'succeeded')).toBeUndefined();
  });
});
