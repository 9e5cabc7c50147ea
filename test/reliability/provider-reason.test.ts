import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, DeploymentStatus } from '../../runtime/deployments/deployment.js';
import { bodyD, createTask, IMAGE, MODEL_MINI } from '../http/helpers.js';
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
  /**
   * Issue 25 N1: token shapes of other services (OpenAI's sk- and sk-proj-, Replicate's r8_, JWTs)
   * and identifiers the service cannot know by name (letters and digits joined by - or _), with the
   * parentheses they leave; a word of the task's own model id, numbers and ranges stay.
   */
  const shapes: [string, { given: string; want: string; model?: 'mini' }][] = [
    [
      "OpenAI's sk-proj- key",
      { given: 'Incorrect API key sk-proj-AbCdEf123456ghIJ provided.', want: 'Incorrect API key provided.' },
    ],
    [
      'an sk- key that is not the service own',
      { given: 'Key sk-live0123abcd is not allowed.', want: 'Key is not allowed.' },
    ],
    [
      "Replicate's r8_ token after Bearer",
      { given: 'bad Bearer r8_SECRETa1b2c3d4e5f6 for this model', want: 'bad Bearer for this model' },
    ],
    [
      'a JWT',
      {
        given: 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sflKxwRJSMeKKF2QT4fwpM expired',
        want: 'token expired',
      },
    ],
    [
      'an upstream id in parentheses, and the parentheses',
      { given: 'The prediction failed (prediction rep-internal-7781).', want: 'The prediction failed.' },
    ],
    [
      "the task's model id and a range stay, an id in parentheses goes",
      {
        given: 'family_a-2.0-mini takes 5-10 seconds, not 20 (worker gpu-a100-7).',
        want: 'family_a-2.0-mini takes 5-10 seconds, not 20.',
        model: 'mini',
      },
    ],
    [
      "another model's id is an identifier like any other",
      { given: 'Use family_a-2.0-mini instead.', want: 'Use instead.' },
    ],
  ];
  it.each([...rows, ...shapes] as [string, { given: string; want: string; model?: 'mini' }][])(
    '%s',
    async (_name, { given, want, model }) => {
      cases++;
      provider.reason = given;
      const { accountId, apiKey } = await t.account(100);
      const body =
        model === 'mini'
          ? {
              model: MODEL_MINI,
              input: { prompt: 'a fox in the snow', reference_image_urls: [IMAGE], duration_seconds: 4 },
            }
          : bodyD();
      const created = await createTask(t, apiKey, body);
      expect(created.status, JSON.stringify(created.body)).toBe(202);
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
