import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../../generator/load/catalogue.js';
import { providerProfilesPlugin } from '../../../generator/plugins/provider-profiles/emit.js';
import { ACME_STUDIO_PROFILE } from '../../support/acme-studio-profile.js';
import { ACME_PROFILE } from '../../support/acme-profile.js';
import { copySpec } from '../../support/spec-copy.js';

/** generated/provider-profiles.ts: every profile of spec/providers/ as typed data, the coded protocols not among them. */
describe('plugin provider-profiles', () => {
  let copy: ReturnType<typeof copySpec>;
  let contents: string;

  beforeAll(async () => {
    copy = copySpec();
    writeFileSync(join(copy.root, 'spec/providers/acme.yaml'), ACME_PROFILE);
    writeFileSync(join(copy.root, 'spec/providers/acme-studio.yaml'), ACME_STUDIO_PROFILE);
    const [file] = await providerProfilesPlugin.emit({ catalogue: loadCatalogue(copy.root), emitted: new Map() });
    contents = file.contents;
    writeFileSync(join(copy.root, 'provider-profiles.ts'), contents);
  }, 60_000);
  afterAll(() => copy.remove());

  it('emits each profile under its name, with defaults filled in; the coded protocols are not profiles', async () => {
    const { providerProfile, PROFILE_NAMES } = await import(join(copy.root, 'provider-profiles.ts'));
    // Every profile file of the copy (the shipped vendors' too), and none of the coded protocols.
    const files = readdirSync(join(copy.root, 'spec/providers')).filter((f) => f.endsWith('.yaml'));
    const profiles = files.filter((f) => /^submit:/m.test(readFileSync(join(copy.root, 'spec/providers', f), 'utf8')));
    expect([...PROFILE_NAMES].sort()).toEqual(profiles.map((f) => f.replace(/\.yaml$/, '')).sort());
    expect(PROFILE_NAMES).toEqual(expect.arrayContaining(['acme', 'acme-studio']));
    for (const coded of ['openai-videos', 'jobs', 'fal-queue', 'replicate']) expect(PROFILE_NAMES).not.toContain(coded);
    expect(providerProfile('replicate')).toBeUndefined();
    expect(providerProfile('acme')).toEqual({
      name: 'acme',
      auth: { scheme: 'bearer' },
      headers: { 'X-Acme-Version': '2025-01-01' },
      submit: {
        method: 'POST',
        path: '/v2/renders',
        body: { engine: '{upstreamModel}', params: '{input}', text: '{input.prompt}' },
        handle: { id: 'render.uid' },
      },
      poll: {
        method: 'GET',
        path: '/v2/renders/{id}',
        state: 'render.phase',
        states: { waiting: 'queued', working: 'running', done: 'succeeded', broken: 'failed', stopped: 'canceled' },
        reason: 'render.problem',
        progress: 'render.percent',
        progressMax: 100,
        capture: {},
      },
      result: { urls: 'render.files[*].href' },
      cancel: { method: 'POST', path: '/v2/renders/{id}/stop' },
      probe: { method: 'GET', path: '/v2/renders/probe-0', ok: [404] },
      errors: {
        code: 'status.code',
        ok: [0],
        reason: 'status.message',
        classes: { 7: 'rejected', 42: 'busy' },
        otherwise: 'rejected',
      },
    });
    expect(providerProfile('acme-studio')).toMatchObject({
      auth: { scheme: 'jwt-hs256' },
      submit: {
        path: { 'text-to-video': '/v1/studio/text', 'image-to-video': '/v1/studio/image' },
        lookup: { method: 'GET', path: '{submitPath}/{taskId}', handle: { id: 'data.job_id' } },
        deadlineSeconds: { min: 3600, max: 7200 },
      },
      poll: { states: { ended: { when: 'data.file_id', is: 'succeeded', otherwise: 'failed' } } },
      result: { urls: 'file.download_url', follow: { method: 'GET', path: '/v1/files/{fileId}' } },
    });
  });

  it('is deterministic: the same spec emits the same text', async () => {
    const [again] = await providerProfilesPlugin.emit({ catalogue: loadCatalogue(copy.root), emitted: new Map() });
    expect(again.contents).toBe(contents);
  });
});
