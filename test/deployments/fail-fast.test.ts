import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, expectError, MODEL_D } from '../http/helpers.js';
import { refusedUrl } from '../../support/upstreams/jobs-protocol-server.js';
import { acceptanceWrites } from './support.js';
import { startTestService, type HttpResult, type TestService } from '../support/service.js';

/** A model the compatible layer takes with a prompt alone. */
const COMPAT_MODEL = 'vendor_b/family_c-2.6/reference-to-video';
const COOLDOWN_SECONDS = 60;

/**
 * Fail fast (issue 28): when every deployment of a model is cooling down (a dead sole upstream),
 * createTask, quote and POST /v1/videos answer 503 50301 with Retry-After (the seconds until the
 * soonest deployment leaves its cool-down) and hold nothing: the balance, the holds, the tasks and
 * the Idempotency-Key rows are as they were. A replay of a key accepted before still answers with
 * its task.
 */
describe('a dead sole upstream: 503 at accept, nothing held', () => {
  let t: TestService;
  let accountId: string;
  let apiKey: string;
  let firstTaskId: string;

  beforeAll(async () => {
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  dead: { kind: jobs, baseUrl: "${await refusedUrl()}" }`,
        'models:',
        `  ${MODEL_D}: [{ upstream: dead }]`,
        `  ${COMPAT_MODEL}: [{ upstream: dead }]`,
        `cooldown: { failures: 1, seconds: ${COOLDOWN_SECONDS} }`,
      ].join('\n'),
    );
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    ({ accountId, apiKey } = await t.account(1000, 'de'));
    // Accepted while the deployment was not known to be dead; its submit fails and cools it down.
    const first = await createTask(t, apiKey, bodyD('the first fox, Picture 1'), {
      headers: { 'Idempotency-Key': 'accepted-before' },
    });
    expect(first.status).toBe(202);
    firstTaskId = first.body.data.taskId;
    const end = Date.now() + 15_000;
    for (;;) {
      const ready = await t.call('GET', '/readyz');
      const dead = ready.body.deployments.find((d: { name: string }) => d.name === 'dead');
      // Nothing listens: the failed submit asks the probe at once, whose failure (no customer's doing) makes it down.
      if (dead.state === 'down') {
        expect(dead).toMatchObject({ consecutiveFailures: 1, lastFailureClass: 'unreachable' });
        expect(dead.lastProbe).toMatchObject({ outcome: 'unreachable' });
        break;
      }
      if (Date.now() > end) throw new Error(`never down: ${JSON.stringify(dead)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });

  const written = () => acceptanceWrites(t, accountId);

  function retryAfter(r: HttpResult): number {
    const value = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(value)).toBe(true);
    expect(value).toBeGreaterThanOrEqual(1);
    expect(value).toBeLessThanOrEqual(COOLDOWN_SECONDS);
    return value;
  }

  const GERMAN = 'Für dieses Modell ist derzeit kein Deployment verfügbar.';

  it.each([
    [
      'createTask',
      () =>
        createTask(t, apiKey, bodyD('a second fox, Picture 1'), {
          headers: { 'Idempotency-Key': 'while-cooling', 'Accept-Language': 'de' },
        }),
    ],
    [
      'quote',
      () =>
        t.call('POST', '/api/v1/jobs/quote', {
          key: apiKey,
          body: bodyD('a quoted fox, Picture 1'),
          headers: { 'Accept-Language': 'de' },
        }),
    ],
  ])('%s: 503 50301 with Retry-After in the caller language, nothing written', async (_name, send) => {
    const before = await written();
    const r = await send();
    expectError(r, 503, 50301);
    expect(r.body.msg).toBe(GERMAN);
    retryAfter(r);
    expect(await written()).toEqual(before);
    await t.checkLedger(accountId);
  });

  it('POST /v1/videos: 503 in the OpenAI error shape with retry-after, nothing written', async () => {
    const before = await written();
    const r = await t.call('POST', '/v1/videos', {
      key: apiKey,
      body: { model: COMPAT_MODEL, prompt: 'a lighthouse at dusk', seconds: '2' },
      headers: { 'Idempotency-Key': 'compat-while-cooling' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ error: { code: 'no_deployment', message: expect.any(String) } });
    retryAfter(r);
    expect(await written()).toEqual(before);
    await t.checkLedger(accountId);
  });

  it.each([
    ['createTask', (key: string) => createTask(t, key, bodyD('a poor fox, Picture 1'))],
    ['quote', (key: string) => t.call('POST', '/api/v1/jobs/quote', { key, body: bodyD('a poor fox, Picture 1') })],
  ])(
    '%s: funds come before availability (docs/contracts.md): a balance short of the hold is 402, not 503',
    async (_name, send) => {
      const poor = await t.account(5);
      const r = await send(poor.apiKey);
      expectError(r, 402, 40201);
      expect(await t.wallet(poor.accountId)).toMatchObject({ available: 5, held: 0 });
    },
  );

  it('POST /v1/videos: funds come before availability too: 402 in the OpenAI error shape, nothing held', async () => {
    const poor = await t.account(5);
    const r = await t.call('POST', '/v1/videos', {
      key: poor.apiKey,
      body: { model: COMPAT_MODEL, prompt: 'a poor lighthouse', seconds: '2' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(402);
    expect(await t.wallet(poor.accountId)).toMatchObject({ available: 5, held: 0 });
  });

  it('a replay of a key accepted before the cool-down still answers with its task, and holds no more', async () => {
    const before = await written();
    const replay = await createTask(t, apiKey, bodyD('the first fox, Picture 1'), {
      headers: { 'Idempotency-Key': 'accepted-before' },
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    expect(replay.body.data.taskId).toBe(firstTaskId);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await written()).toEqual(before);
  });
});
