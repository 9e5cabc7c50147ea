import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, DeploymentStatus } from '../../runtime/deployments/deployment.js';
import { bodyD, createTask } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { recordCounts } from './support.js';

/** A provider that fails every task with the reason the test gives it (a provider's text is untrusted, of any length). */
class FailingProvider implements Deployment {
  readonly name = 'failing-provider';
  reason = '';
  accepts(): boolean {
    return true;
  }
  isAvailable(): boolean {
    return true;
  }
  async start(job: { taskId: string }): Promise<string> {
    return `failing:${job.taskId}`;
  }
  async poll(): Promise<DeploymentStatus> {
    return { state: 'failed', reason: this.reason };
  }
}

/**
 * The reason a provider reports is cleaned of ids, keys and addresses before a client sees it.
 * Some of those patterns take time quadratic in a run they fail on: 300 KB of one letter would
 * hold the event loop for hours. Only the head of the text is read.
 */
describe("a provider's failure reason of any length", () => {
  const provider = new FailingProvider();
  let t: TestService;
  let cases = 0;
  beforeAll(async () => {
    t = await startTestService({}, { deployments: [provider] });
  });
  afterAll(async () => {
    recordCounts('provider-reason', { cases, violations: 0 });
    await t?.close();
  });

  const HEAD = 'Quota exceeded for key sk-service-abcdefghijklmnop (request req_0123456789) contact ops@example.com.';
  // [name, { given: the reason, want: the errorMessage the client reads }]
  const rows: [string, { given: string; want: string }][] = [
    ['a short reason, cleaned', { given: HEAD, want: 'Quota exceeded for key contact.' }],
    [
      '300 KB of one letter after it',
      { given: `${HEAD} ${'a'.repeat(300_000)}`, want: 'Quota exceeded for key contact.' },
    ],
    ['300 KB of one letter and nothing else', { given: 'a'.repeat(300_000), want: '' }],
    [
      '300 KB of words, cut at a word',
      {
        given: `${HEAD} ${'word '.repeat(60_000)}`,
        want: `Quota exceeded for key contact. ${'word '.repeat(60_000)}`.slice(0, 500).trim(),
      },
    ],
  ];
  it.each(rows)(
    '%s',
    async (_name, { given, want }) => {
      cases++;
      provider.reason = given;
      const { accountId, apiKey } = await t.account(100);
      const created = await createTask(t, apiKey, bodyD());
      expect(created.status).toBe(202);
      // Bounded: a blocked event loop fails here instead of hanging the suite.
      const done = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
      expect(done).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
      if (want) expect(done.errorMessage).toBe(want);
      else expect(done.errorMessage ?? '').not.toContain('aaaa');
      expect(await t.wallet(accountId)).toMatchObject({ available: 100, held: 0 });
      await t.checkLedger(accountId);
    },
    30_000,
  );
});
