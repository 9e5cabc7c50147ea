import { storedRow } from '../support/stored-rows.js';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputD, MODEL_D, PRICE_D } from '../http/helpers.js';
import { ACME_PROFILE } from '../support/acme-profile.js';
import { AcmeServer } from '../support/acme-server.js';
import { call, waitForTask, type MediaforgeProcess } from './support.js';
import { type ServedCopy, serveWithProfiles } from './profile-copy.js';

/**
 * A maintainer's path (issue 27): a new provider added as one YAML file, spec/providers/acme.yaml,
 * then `npm run generate` and a deployments file naming `kind: acme`; no TypeScript written. The
 * copy of the checkout is served by a real `mediaforge serve` against a loopback Acme server
 * (test/support/acme-server.ts, written from the example protocol, not from the profile).
 */

const QUIET_PROFILE = ACME_PROFILE.replace(/^protocol: acme$/m, 'protocol: acme-quiet').replace(/^probe: .*\n/m, '');

describe('a new provider is one YAML file (spec/providers/acme.yaml, generate, kind: acme)', () => {
  let served: ServedCopy | undefined;
  let first: AcmeServer;
  let second: AcmeServer;
  let service: MediaforgeProcess;
  let key: string;

  beforeAll(async () => {
    first = await new AcmeServer({ name: 'first' }).start();
    second = await new AcmeServer({ name: 'second' }).start();
    const deployments = `upstreams:
  acme-first: { kind: acme, baseUrl: "${first.url}", secretEnv: ACME_KEY }
  acme-second: { kind: acme, baseUrl: "${second.url}", secretEnv: ACME_KEY }
  acme-quiet: { kind: acme-quiet, baseUrl: "${second.url}", secretEnv: ACME_KEY }
models:
  ${MODEL_D}:
    - { upstream: acme-first, upstreamModel: acme-render-2, priority: 1 }
    - { upstream: acme-second, upstreamModel: acme-render-2 }
`;
    served = await serveWithProfiles(
      'profile-acme',
      // The same protocol without a probe (issue 37): nothing to ask it at start, which is not a failure.
      { 'acme.yaml': ACME_PROFILE, 'acme-quiet.yaml': QUIET_PROFILE },
      deployments,
      { ACME_KEY: AcmeServer.key },
    );
    ({ service, key } = served);
  }, 180_000);

  afterAll(async () => {
    await served?.stop();
    await first?.close();
    await second?.close();
  });

  /** What the task's account was charged for it (the task row's charged_credits). */
  const charged = async (taskId: string) => (await storedRow(service.db, 'tasks', { id: taskId })).charged_credits;

  const run = async (prompt: string) => {
    const created = await call(service.url, 'POST', '/api/v1/jobs/createTask', key, {
      model: MODEL_D,
      input: inputD(prompt),
    });
    expect(created.status).toBe(202);
    return waitForTask(service.url, key, created.body.data.taskId);
  };

  it('`mediaforge deployments check` in the copy knows kind acme', () => {
    const file = join(service.dir, 'deployments.yaml');
    const out = execFileSync(process.execPath, ['bin/mediaforge.js', 'deployments', 'check', '--deployments', file], {
      cwd: served!.root,
      env: { ...process.env, ACME_KEY: AcmeServer.key },
    }).toString();
    expect(out).toContain('ok (3 upstreams, 1 model routed)');
  });

  it('at start, a profile without a probe is logged `not probed` at info, the others probed', async () => {
    const lines = () =>
      service.server
        .output()
        .split('\n')
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as { level: number; msg: string }];
          } catch {
            return [];
          }
        });
    const deadline = Date.now() + 20_000;
    while (!lines().some((l) => l.msg?.startsWith('upstream acme-quiet')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines().filter((l) => l.msg?.startsWith('upstream acme-quiet'))).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'upstream acme-quiet (acme-quiet): not probed (acme-quiet: the profile has no probe)',
      }),
    ]);
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 30, msg: expect.stringMatching(/^upstream acme-first \(acme\): ok /) }),
    );
  });

  it('runs a task end to end: the body is filled from the profile, the result stored, charged once', async () => {
    const task = await run('a lighthouse at dusk');
    expect(task.state).toBe('succeeded');
    expect(await charged(task.taskId)).toBe(PRICE_D);
    const sent = first.submits.at(-1)!;
    // {upstreamModel}, {input} without the field the body names itself, {input.prompt}.
    expect(sent).toEqual({
      engine: 'acme-render-2',
      params: expect.objectContaining({ reference_image_urls: [expect.any(String)] }),
      text: 'a lighthouse at dusk',
    });
    expect(sent.params).not.toHaveProperty('prompt');
    expect(second.submits).toHaveLength(0);
  });

  it('a 200 answer whose body says busy (code 42) fails over to the second deployment', async () => {
    const before = second.submits.length;
    const task = await run('busy-at-first: a kite');
    expect(task.state).toBe('succeeded');
    expect(second.submits.length).toBe(before + 1);
  });

  it('a 200 answer whose body says refused (code 7) fails the task with the reason, never elsewhere', async () => {
    const before = second.submits.length;
    const task = await run('refuse: a kite');
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(await charged(task.taskId)).toBe(0);
    expect(task.errorMessage).toBe('The prompt is not allowed.');
    expect(second.submits.length).toBe(before);
  });

  it('a render that breaks fails the task with the provider reason', async () => {
    const task = await run('broken: a kite');
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(await charged(task.taskId)).toBe(0);
    expect(task.errorMessage).toBe('The render crashed on frame 12.');
  });

  it('a render the provider stops on its own fails the task: the provider canceled the generation', async () => {
    const task = await run('stopped: a kite');
    expect(task).toMatchObject({ state: 'failed' });
    expect(await charged(task.taskId)).toBe(0);
    expect(task.errorMessage).toBe('The provider canceled the generation.');
  });

  it('a 429 with Retry-After on a poll is waited out, and the task succeeds', async () => {
    const task = await run('throttle: a kite');
    expect(task.state).toBe('succeeded');
    const render = [...first.renders.values()].find((r) => String(r.body.text).startsWith('throttle'))!;
    expect(render.polls).toBeGreaterThanOrEqual(3);
  });

  it('a status value the profile does not map is a protocol failure of that poll, logged with the value, polled again', async () => {
    const created = await call(service.url, 'POST', '/api/v1/jobs/createTask', key, {
      model: MODEL_D,
      input: inputD('paused: a kite'),
    });
    const taskId = created.body.data.taskId;
    const deadline = Date.now() + 20_000;
    let render: ReturnType<AcmeServer['renders']['get']>;
    for (;;) {
      render = [...first.renders.values()].find((r) => String(r.body.text).startsWith('paused'));
      if ((render?.polls ?? 0) >= 4 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(render!.polls).toBeGreaterThanOrEqual(4);
    expect(service.server.output()).toContain('unmapped status value \\"paused\\"');
    const record = await call(service.url, 'GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, key);
    expect(record.body.data.state).toBe('running');
  });
});
