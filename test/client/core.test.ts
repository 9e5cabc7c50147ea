/**
 * The retry policy and error mapping of the client core, against a scripted fetch (no server):
 * which failures are repeated, for which calls, how long the client waits, what it throws.
 */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  InternalServerError,
  Mediaforge,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
  type FetchLike,
} from '@mediaforge/client';

type Script = (request: Request, attempt: number) => Response | Promise<Response> | 'network-error' | 'hang';

function scripted(script: Script) {
  const seen: Request[] = [];
  const fetchImpl: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    seen.push(request.clone());
    const step = await script(request, seen.length - 1);
    if (step === 'network-error') throw new TypeError('fetch failed');
    if (step === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        if (request.signal.aborted) reject(request.signal.reason);
        request.signal.addEventListener('abort', () => reject(request.signal.reason));
      });
    }
    return step;
  };
  return { seen, fetchImpl };
}

const envelope = (status: number, code: number, data: unknown = null, headers: Record<string, string> = {}) =>
  new Response(
    JSON.stringify({ code, msg: code === 200 ? 'success' : `error ${code}`, data, request_id: `req_${code}` }),
    { status, headers: { 'content-type': 'application/json', 'x-request-id': `req_${code}`, ...headers } },
  );
const balance = { available: 1, held: 0, total: 1, availableCost: '0.01', heldCost: '0.00', totalCost: '0.01' };
const task = { taskId: 'task_1', state: 'queued' };
const body = {
  model: 'vendor_d/family_d/reference-to-video',
  input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'] },
} as const;

function client(fetchImpl: FetchLike, extra: Partial<ConstructorParameters<typeof Mediaforge>[0]> = {}) {
  return new Mediaforge({ apiKey: 'sk-service-test', baseUrl: 'http://api.test/api/v1/', fetch: fetchImpl, ...extra });
}

describe('client core', () => {
  it('sends the key as a Bearer header, never in the URL, under the host root', async () => {
    const { seen, fetchImpl } = scripted(() => envelope(200, 200, balance));
    await client(fetchImpl, { language: 'de' }).credit.get();
    expect(seen[0].url).toBe('http://api.test/api/v1/chat/credit');
    expect(seen[0].headers.get('authorization')).toBe('Bearer sk-service-test');
    expect(seen[0].headers.get('accept-language')).toBe('de');
    expect(seen[0].url).not.toContain('sk-service');
  });

  it('retries a read on 5xx and on a network error, honouring Retry-After', async () => {
    const { seen, fetchImpl } = scripted((_r, attempt) =>
      attempt === 0
        ? envelope(503, 50302, null, { 'retry-after': '1' })
        : attempt === 1
          ? 'network-error'
          : envelope(200, 200, balance),
    );
    const started = Date.now();
    expect(await client(fetchImpl).credit.get()).toEqual(balance);
    expect(seen).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries createTask with one Idempotency-Key, generated when none is given', async () => {
    const { seen, fetchImpl } = scripted((_r, attempt) =>
      attempt < 2
        ? envelope(500, 50001, null, { 'retry-after': '0' })
        : envelope(202, 200, task, { 'retry-after': '3' }),
    );
    const created = await client(fetchImpl).tasks.createDetailed(body);
    expect(seen.map((r) => r.headers.get('idempotency-key'))).toEqual([
      created.idempotencyKey,
      created.idempotencyKey,
      created.idempotencyKey,
    ]);
    expect(created.retryAfterSeconds).toBe(3);
    const given = scripted((_r, attempt) => (attempt === 0 ? 'network-error' : envelope(202, 200, task)));
    await client(given.fetchImpl).tasks.create(body, { idempotencyKey: 'mine' });
    expect(given.seen.map((r) => r.headers.get('idempotency-key'))).toEqual(['mine', 'mine']);
  });

  it('sends wait as a query parameter and gives the attempt time for it', async () => {
    const { seen, fetchImpl } = scripted(() => envelope(200, 200, { ...task, state: 'succeeded' }));
    await client(fetchImpl, { timeoutMs: 10 }).tasks.create(body, { wait: true });
    expect(new URL(seen[0].url).searchParams.get('wait')).toBe('60');
  });

  it('does not repeat a call that is not safe to repeat, except after 429', async () => {
    const failing = scripted(() => envelope(503, 50302));
    await expect(
      client(failing.fetchImpl).files.createTicket({ fileName: 'a.png', contentType: 'image/png', size: 1 }),
    ).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(failing.seen).toHaveLength(1);
    const lost = scripted(() => 'network-error');
    await expect(
      client(lost.fetchImpl).files.createTicket({ fileName: 'a.png', contentType: 'image/png', size: 1 }),
    ).rejects.toBeInstanceOf(ConnectionError);
    expect(lost.seen).toHaveLength(1);
    const limited = scripted((_r, attempt) =>
      attempt === 0 ? envelope(429, 42901, null, { 'retry-after': '0' }) : envelope(200, 200, { fileId: 'f' }),
    );
    await client(limited.fetchImpl).files.createTicket({ fileName: 'a.png', contentType: 'image/png', size: 1 });
    expect(limited.seen).toHaveLength(2);
  });

  it('never repeats 4xx answers and gives up after maxRetries', async () => {
    const missing = scripted(() => envelope(404, 40401));
    await expect(client(missing.fetchImpl).tasks.get('task_x')).rejects.toBeInstanceOf(NotFoundError);
    expect(missing.seen).toHaveLength(1);
    const down = scripted(() => envelope(502, 50001, null, { 'retry-after': '0' }));
    await expect(client(down.fetchImpl, { maxRetries: 3 }).tasks.get('task_x')).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(down.seen).toHaveLength(4);
    const limited = scripted(() => envelope(429, 42901, null, { 'retry-after': '0' }));
    const error = await client(limited.fetchImpl, { maxRetries: 1 })
      .tasks.get('task_x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(0);
  });

  it('maps an answer that is not an envelope by its status', async () => {
    const edge = scripted(
      () => new Response('<html>timeout</html>', { status: 524, headers: { 'content-type': 'text/html' } }),
    );
    const error = await client(edge.fetchImpl, { maxRetries: 0 })
      .tasks.get('task_x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 524, code: 52400, requestId: null });
  });

  it('times an attempt out, retries a safe call, and stops at once on the caller abort', async () => {
    const slow = scripted((_r, attempt) => (attempt === 0 ? 'hang' : envelope(200, 200, balance)));
    expect(await client(slow.fetchImpl, { timeoutMs: 100 }).credit.get()).toEqual(balance);
    expect(slow.seen).toHaveLength(2);
    const never = scripted(() => 'hang');
    await expect(client(never.fetchImpl, { timeoutMs: 50, maxRetries: 0 }).credit.get()).rejects.toBeInstanceOf(
      TimeoutError,
    );
    const controller = new AbortController();
    const pending = client(never.fetchImpl).credit.get({ signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
  });
});
