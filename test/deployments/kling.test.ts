import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../http/helpers.js';
import { type TestService, waitForTerminal } from '../support/service.js';
import { KlingServer, type KlingServerOptions, klingToken } from '../../support/upstreams/vendors/kling-server.js';
import type { MediaforgeProcess } from './support.js';
import { bothModels, deploymentsFile, serveDeployments, taskRow, textTask } from './profile-deployments.js';

const ACCESS = 'AK-operator';
const SECRET = 'SK-operator-secret';

/**
 * What of Kling is Kling's alone, end to end (its loopback server verifies the JWT the service signs):
 * the token's claims, its redaction, business codes in 200 answers, task ids that cannot be a
 * handle, the lookup by external_task_id. What every adapter shares is ./adapter-behaviour.test.ts;
 * Kling's request and answer shapes are test/unit/upstreams/profile-{request,answer}.test.ts.
 */
describe("kling profile: Kling's API against a loopback Kling (JWT, envelopes, external_task_id)", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: KlingServer[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(
    given: KlingServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; secondGiven?: KlingServerOptions; firstSecret?: string } = {},
  ) {
    const keys = { accessKey: ACCESS, secretKey: SECRET };
    const first = await new KlingServer({ latencyMs: 300, ...keys, ...given }).start();
    const second = await new KlingServer({ latencyMs: 300, ...keys, ...settings.secondGiven }).start();
    servers.push(first, second);
    const file = deploymentsFile(
      'kling',
      {
        first: { baseUrl: first.baseUrl, secretEnv: 'KLING_FIRST' },
        second: { baseUrl: second.baseUrl, secretEnv: 'KLING_KEYS' },
      },
      bothModels('kling-v2-1'),
    );
    t = await serveDeployments(
      file,
      { KLING_FIRST: `${ACCESS}:${settings.firstSecret ?? SECRET}`, KLING_KEYS: `${ACCESS}:${SECRET}` },
      settings,
    );
    const account = await t.account(1000);
    return { first, second, t, ...account };
  }

  async function run(t: TestService, apiKey: string, body: unknown) {
    const created = await createTask(t, apiKey, body);
    expect(created.status).toBe(202);
    return waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
  }

  it('the loopback Kling refuses as Kling does: no token 1001, a wrong signature 1000, an expired token 1004, a token not yet valid 1003', async () => {
    const kling = await new KlingServer({ accessKey: ACCESS, secretKey: SECRET }).start();
    servers.push(kling);
    const ask = async (authorization?: string) => {
      const r = await fetch(`${kling.url}/v1/videos/text2video/1`, {
        headers: authorization ? { authorization } : {},
      });
      return [r.status, (await r.json()).code];
    };
    const now = Math.floor(Date.now() / 1000);
    expect(await ask()).toEqual([401, 1001]);
    expect(await ask(`Bearer ${klingToken(ACCESS, 'not-the-secret')}`)).toEqual([401, 1000]);
    expect(await ask(`Bearer ${klingToken(ACCESS, SECRET, { exp: now - 10 })}`)).toEqual([401, 1004]);
    expect(await ask(`Bearer ${klingToken(ACCESS, SECRET, { nbf: now + 600 })}`)).toEqual([401, 1003]);
    expect(await ask(`Bearer ${klingToken(ACCESS, SECRET)}`)).toEqual([404, 1203]);
  });

  it('text to video: a fresh HS256 JWT (iss, exp = now + 1800, nbf = now - 5), POST /v1/videos/text2video with external_task_id = the task id; submitted, processing, succeed; the video downloaded', async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 600, queuedMs: 300 });
    const task = await run(t, apiKey, textTask('a fox in the snow', { duration_seconds: 5 }));
    expect(task.state).toBe('succeeded');
    const [submit] = first.submits;
    expect(submit.path).toBe('/v1/videos/text2video');
    expect(submit.body).toEqual({
      model_name: 'kling-v2-1',
      prompt: 'a fox in the snow',
      aspect_ratio: '16:9',
      duration: '5',
      external_task_id: task.taskId,
    });
    const [claims] = first.tokens;
    expect(claims.iss).toBe(ACCESS);
    expect(Number(claims.exp) - Number(claims.nbf)).toBe(1805);
    // The operator's secret never travels: only the token signed with it.
    expect(submit.headers.authorization).not.toContain(SECRET);
    expect(second.submits).toEqual([]);
    const [id] = [...first.jobs.keys()];
    expect((await taskRow(t, task.taskId)).deployment_handle).toContain(id);
    expect(first.polls).toBeGreaterThan(1);
    expect(first.downloads).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it("an error inside HTTP 200 at a poll (code 5000): never read as the task's state; polled again, the task succeeds", async () => {
    const kling = new KlingServer({ envelopeIn200: true });
    const { first, t, accountId, apiKey } = await serve({
      poll: (i) => (i < 2 ? kling.envelope('internal') : undefined),
    });
    const task = await run(t, apiKey, textTask('a fox polled through errors'));
    expect(task.state).toBe('succeeded');
    expect(first.pollAnswers).toBeGreaterThan(2);
    expect(first.jobs.size).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
  });

  it('a refusal that echoes the Authorization header: the task fails with the message, but neither the token signed with the secret nor the keys appear in it', async () => {
    const { first, t, apiKey } = await serve({ echoAuthorization: true });
    const task = await run(t, apiKey, textTask('an echoed fox'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    const token = String(first.submits[0].headers.authorization).slice('Bearer '.length);
    expect(token.split('.')).toHaveLength(3);
    expect(task.errorMessage).toContain('Invalid request parameters');
    for (const secret of [token, SECRET, `${ACCESS}:${SECRET}`]) expect(task.errorMessage).not.toContain(secret);
    const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${task.taskId}`, { key: apiKey });
    expect(JSON.stringify(record.body)).not.toContain(token);
  });

  it('a 401 that echoes the signed token: the last failure in /readyz shows it redacted, as the key would be', async () => {
    const { first, t, apiKey } = await serve({ echoAuthorizationUnauthorized: true });
    const task = await run(t, apiKey, textTask('a fox at the gate'));
    expect(task.state).toBe('succeeded');
    const token = String(first.submits[0].headers.authorization).slice('Bearer '.length);
    expect(token.split('.')).toHaveLength(3);
    const ready = await t.call('GET', '/readyz');
    const failed = ready.body.deployments.find((d: { name: string }) => d.name === 'first');
    expect(failed.lastFailure).toContain('Authentication failed: Bearer [redacted]');
    const text = JSON.stringify(ready.body);
    for (const secret of [token, SECRET, `${ACCESS}:${SECRET}`]) expect(text).not.toContain(secret);
  });

  it("a business code Kling's table does not have: the task fails with Kling's message, and the deployment is not blamed (no fail-over)", async () => {
    const { first, second, t, apiKey } = await serve({
      submit: () => ({ status: 200, body: { code: 1999, message: 'Something new went wrong', request_id: 'r' } }),
    });
    const task = await run(t, apiKey, textTask('a fox of a new kind'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('Something new went wrong');
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    const ready = await t.call('GET', '/readyz');
    const firstState = ready.body.deployments.find((d: { name: string }) => d.name === 'first');
    expect(firstState.lastFailure ?? null).toBeNull();
  });

  it('a wrong secret key: Kling refuses the signature (401, 1000); the next deployment takes the task', async () => {
    const { first, second, t, apiKey } = await serve({}, { firstSecret: 'a-wrong-secret' });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 1]);
    expect(first.tokens).toEqual([]);
  });

  it.each(['..', '.', ''])(
    'a task_id %j (a dot-segment, or empty) is a protocol failure of the submit, never a handle: submitted again to the same Kling (the job may exist), never polled at that id',
    async (id) => {
      const { first, second, t, apiKey } = await serve({
        submit: (i) =>
          i === 0
            ? {
                status: 200,
                body: { code: 0, message: 'SUCCEED', request_id: 'r', data: { task_id: id, task_status: 'submitted' } },
              }
            : undefined,
      });
      const task = await run(t, apiKey, textTask('a fox with no name'));
      expect(task.state).toBe('succeeded');
      expect([first.submits.length, second.submits.length]).toEqual([2, 0]);
      expect(first.submits[1].body.external_task_id).toBe(task.taskId);
    },
  );

  it('the connection dropped after Kling created the task: the job is found by external_task_id, not submitted twice', async () => {
    const { first, second, t, accountId, apiKey } = await serve({
      submit: (i) => (i === 0 ? 'reset-after-create' : undefined),
    });
    const task = await run(t, apiKey, textTask('an ambiguous fox'));
    expect(task.state).toBe('succeeded');
    expect(first.jobs.size).toBe(1);
    const [job] = [...first.jobs.values()];
    expect(job.body.external_task_id).toBe(task.taskId);
    expect(second.submits).toEqual([]);
    expect((await taskRow(t, task.taskId)).deployment_handle).toContain(job.id);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
  });
});
