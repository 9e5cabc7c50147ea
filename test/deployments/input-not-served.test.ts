import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { createTask, expectError } from '../http/helpers.js';
import { refusedUrl } from '../../support/upstreams/jobs-protocol-server.js';
import { acceptanceWrites } from './support.js';
import { startTestService, type TestService } from '../support/service.js';

/** A text-to-video model whose default ratio is `adaptive`, which Runway has no size for. */
const MODEL = 'vendor_a/family_a-2.5/text-to-video';
const FRENCH =
  "Aucun déploiement de ce modèle n'accepte input.aspect_ratio adaptive ; les déploiements acceptent : 21:9, 16:9, 4:3, 1:1, 3:4, 9:16.";

/**
 * Issue 37, point 7: a request whose values no route of its model can take is a 400 (40030,
 * input_not_served) naming the field, the value and what the deployments take, in the caller's
 * language, whatever the deployments' health, and nothing is written; a request the routes could
 * take while they all cool down stays 503 50301. The model is routed to Runway alone (a dead
 * upstream, so that it cools down), and its default request (`aspect_ratio: adaptive`) is one
 * Runway cannot take.
 */
describe('a request no deployment can ever serve: 400 40030, not 503', () => {
  let t: TestService;
  let accountId: string;
  let apiKey: string;

  beforeAll(async () => {
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  gen: { kind: runway, baseUrl: "${await refusedUrl()}" }`,
        'models:',
        `  ${MODEL}: [{ upstream: gen, upstreamModel: gen4_turbo }]`,
        'cooldown: { failures: 1, seconds: 600 }',
      ].join('\n'),
    );
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    ({ accountId, apiKey } = await t.account(1000, 'fr'));
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });

  const written = () => acceptanceWrites(t, accountId);

  const expectNotServed = (body: any) => {
    expect(body.data.errors).toEqual([{ path: 'input.aspect_ratio', rule: 'not_served', message: FRENCH }]);
  };

  it('createTask and quote: the default request (aspect_ratio adaptive) is 400 40030 naming the field, in the caller language; nothing written', async () => {
    const before = await written();
    const created = await createTask(
      t,
      apiKey,
      { model: MODEL, input: { prompt: 'a kite over the sea' } },
      { headers: { 'Idempotency-Key': 'never-served', 'Accept-Language': 'fr' } },
    );
    expectError(created, 400, 40030);
    expectNotServed(created.body);
    const quoted = await t.call('POST', '/api/v1/jobs/quote', {
      key: apiKey,
      body: { model: MODEL, input: { prompt: 'a kite over the sea', aspect_ratio: 'adaptive' } },
      headers: { 'Accept-Language': 'fr' },
    });
    expectError(quoted, 400, 40030);
    expectNotServed(quoted.body);
    const compat = await t.call('POST', '/v1/videos', {
      key: apiKey,
      body: { model: MODEL, prompt: 'a kite over the sea', seconds: '5' },
    });
    expect(compat.status, JSON.stringify(compat.body)).toBe(400);
    expect(compat.body).toMatchObject({ error: { code: 'input_not_served', param: 'aspect_ratio' } });
    expect(await written()).toEqual(before);
    await t.checkLedger(accountId);
  });

  it('still 400 while every deployment cools down; a request they could take is then 503 50301', async () => {
    // A request Runway can take is accepted; its submit finds the upstream dead, and the probe confirms it.
    const first = await createTask(t, apiKey, { model: MODEL, input: { prompt: 'a kite', aspect_ratio: '16:9' } });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const end = Date.now() + 15_000;
    for (;;) {
      const ready = await t.call('GET', '/readyz');
      // Nothing listens: the failed submit asks the probe, whose failure makes it down (docs/deployments.md, "Health").
      if (['cooling', 'down'].includes(ready.body.deployments.find((d: { name: string }) => d.name === 'gen').state))
        break;
      if (Date.now() > end) throw new Error('never cooling');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const before = await written();
    const never = await createTask(t, apiKey, { model: MODEL, input: { prompt: 'a kite over the sea' } });
    expectError(never, 400, 40030);
    expectNotServed(
      (await createTask(t, apiKey, { model: MODEL, input: { prompt: 'x' } }, { headers: { 'Accept-Language': 'fr' } }))
        .body,
    );
    const later = await createTask(t, apiKey, { model: MODEL, input: { prompt: 'a kite', aspect_ratio: '9:16' } });
    expectError(later, 503, 50301);
    expect(Number(later.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await written()).toEqual(before);
  });
});
