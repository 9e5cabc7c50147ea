import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME_STUDIO_PROFILE } from '../support/acme-studio-profile.js';
import { AcmeStudioServer, STUDIO_ACCESS, STUDIO_SECRET } from '../support/acme-studio-server.js';
import { call, waitForTask, type MediaforgeProcess } from './support.js';
import { type ServedCopy, serveWithProfiles } from './profile-copy.js';
import { referenceCopyLink, referenceUrl } from '../support/reference-url.js';

const IMAGE_MODEL = 'vendor_b/family_b-1.1/image-to-video';
const TEXT_MODEL = 'vendor_b/family_b-1.1/text-to-video';
const IMAGE = referenceUrl('/first.png');

/**
 * The named pieces of the profile vocabulary (spec/providers/README.md) through a real `mediaforge
 * serve` run from a copy of the checkout with spec/providers/acme-studio.yaml added and generated:
 * a JWT per request, the submit's path by the model's mode and a poll that repeats it, typed
 * content items left out when their field is absent, the seconds to the deadline clamped, a state
 * that is a condition, a follow-up request for the link, a lookup by the task's id after a submit
 * whose answer never came, and the probe.
 */
describe('profile pieces (acme-studio)', () => {
  let served: ServedCopy | undefined;
  let studio: AcmeStudioServer;
  let service: MediaforgeProcess;
  let key: string;
  const secret = `${STUDIO_ACCESS}:${STUDIO_SECRET}`;
  let deployments = '';

  beforeAll(async () => {
    studio = await new AcmeStudioServer().start();
    deployments = `upstreams:
  studio: { kind: acme-studio, baseUrl: "${studio.url}", secretEnv: STUDIO_KEY }
models:
  ${IMAGE_MODEL}:
    - { upstream: studio, upstreamModel: studio-i2v }
  ${TEXT_MODEL}:
    - { upstream: studio, upstreamModel: studio-t2v }
`;
    served = await serveWithProfiles('profile-pieces', { 'acme-studio.yaml': ACME_STUDIO_PROFILE }, deployments, {
      STUDIO_KEY: secret,
    });
    ({ service, key } = served);
  }, 180_000);

  afterAll(async () => {
    await served?.stop();
    await studio?.close();
  });

  const run = async (model: string, input: Record<string, unknown>) => {
    const created = await call(service.url, 'POST', '/api/v1/jobs/createTask', key, { model, input });
    expect(created.status).toBe(202);
    const task = await waitForTask(service.url, key, created.body.data.taskId);
    const jobs = [...studio.jobs.values()].filter((job) => job.body.ref === task.taskId);
    return { task, jobs };
  };

  it('image-to-video: the mode picks the path, absent items are left out, the deadline is clamped, the link comes from the follow-up', async () => {
    const { task, jobs } = await run(IMAGE_MODEL, { prompt: 'a heron lifts off', image_url: IMAGE });
    expect(task.state).toBe('succeeded');
    expect(jobs).toHaveLength(1);
    const [job] = jobs;
    expect(job.path).toBe('/v1/studio/image');
    expect(job.body.model).toBe('studio-i2v');
    expect(job.body.content).toEqual([
      { type: 'text', text: 'a heron lifts off' },
      // The service's link to the copy of the customer's image it measured (issue 37 point 3).
      { type: 'image_url', image_url: { url: referenceCopyLink(service.url) }, role: 'first_frame' },
    ]);
    // The task's deadline is under an hour away: the provider's minimum is sent.
    expect(job.body.expires_after).toBe(3600);
    expect(studio.requests).toContain(`GET /v1/studio/image/${job.id}`);
    expect(studio.requests).toContain(`GET /v1/files/f-${job.id}`);
  });

  it('text-to-video goes to the text path, with only the text item', async () => {
    const { task, jobs } = await run(TEXT_MODEL, { prompt: 'a quiet harbour' });
    expect(task.state).toBe('succeeded');
    expect(jobs.map((job) => [job.path, job.body.content])).toEqual([
      ['/v1/studio/text', [{ type: 'text', text: 'a quiet harbour' }]],
    ]);
  });

  it('a state that is a condition: ended without a file fails the task with the reason', async () => {
    const { task } = await run(TEXT_MODEL, { prompt: 'broken: a storm' });
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toBe('The studio could not render the scene.');
  });

  it('a submit whose answer never came: the job is looked up by the task id, one job, the task succeeds', async () => {
    const { task, jobs } = await run(TEXT_MODEL, { prompt: 'reset: a lighthouse' });
    expect(task.state).toBe('succeeded');
    expect(jobs).toHaveLength(1);
    expect(studio.requests).toContain(`GET /v1/studio/text/${task.taskId}`);
  });

  it('a jwt-hs256 upstream whose secret is not ACCESS_KEY:SECRET_KEY is refused by the deployments check, at secretEnv, without the value', async () => {
    const { parseDeployments } = await import(join(served!.root, 'runtime/routing/deployments-file.ts'));
    let message = '';
    try {
      parseDeployments('deployments.yaml', deployments, { STUDIO_KEY: 'a-key-without-colon' });
    } catch (error) {
      message = (error as Error).message;
    }
    const col = deployments.split('\n')[1].indexOf('secretEnv') + 1;
    expect(message).toBe(
      `deployments.yaml:2:${col}: the environment variable STUDIO_KEY (the key of upstream studio) must hold ACCESS_KEY:SECRET_KEY: kind acme-studio signs a JWT with them`,
    );
    expect(message).not.toContain('a-key-without-colon');
  });

  it('the probe: a request that creates nothing, signed like the others; a wrong secret is refused as the provider refuses it', async () => {
    const { parseDeployments } = await import(join(served!.root, 'runtime/routing/deployments-file.ts'));
    const { buildDeployments } = await import(join(served!.root, 'runtime/routing/build.ts'));
    const { configFromEnv } = await import(join(served!.root, 'runtime/config.ts'));
    const probe = async (key: string) => {
      const env = { STUDIO_KEY: key };
      const plan = parseDeployments('deployments.yaml', deployments, env);
      const built = buildDeployments(configFromEnv(env), Date.now, plan);
      const result = await built.byName('studio').probe();
      for (const d of built.list()) d.close?.();
      return result;
    };
    const before = studio.jobs.size;
    expect(await probe(secret)).toMatchObject({ ok: true, status: 200 });
    expect(await probe(`${STUDIO_ACCESS}:not-the-secret`)).toMatchObject({ ok: false, status: 401 });
    expect(studio.jobs.size).toBe(before);
  });
});
