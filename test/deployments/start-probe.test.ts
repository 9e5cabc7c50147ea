/**
 * The start-up probe (issue 28): `serve` asks each upstream something that creates nothing and logs
 * one line per upstream (ok, unreachable, key refused, wrong path), naming the deployment and never
 * the key, without waiting for it to serve; `deployments check --probe` does the same and exits 1
 * when one fails. Real processes, loopback protocol servers written from each protocol.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';
import { FalQueueServer } from '../../support/upstreams/fal-queue-server.js';
import { JobsProtocolServer, refusedUrl } from '../../support/upstreams/jobs-protocol-server.js';
import { OpenAiVideosServer } from '../../support/upstreams/openai-videos-server.js';
import { ReplicateServer } from '../../support/upstreams/replicate-server.js';
import { ArkServer } from '../../support/upstreams/vendors/ark-server.js';
import { DashscopeServer } from '../../support/upstreams/vendors/dashscope-server.js';
import { KlingServer } from '../../support/upstreams/vendors/kling-server.js';
import { LumaServer } from '../../support/upstreams/vendors/luma-server.js';
import { MinimaxServer } from '../../support/upstreams/vendors/minimax-server.js';
import { RunwayServer } from '../../support/upstreams/vendors/runway-server.js';

const GOOD = 'sk-probe-right-key-0123456789';
const BAD = 'sk-probe-wrong-key-9876543210';

function run(args: string[], env: NodeJS.ProcessEnv, until?: (out: string) => boolean) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/mediaforge.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (until?.(out)) child.kill('SIGTERM');
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('the start-up probe', () => {
  const jobs = new JobsProtocolServer({ apiKey: GOOD });
  const openai = new OpenAiVideosServer();
  const replicate = new ReplicateServer({ apiKey: GOOD });
  const fal = new FalQueueServer({ apiKey: GOOD });
  let dir: string;
  let file: string;
  beforeAll(async () => {
    await Promise.all([jobs.start(), openai.start(), replicate.start(), fal.start()]);
    dir = mkdtempSync(join(tmpdir(), 'mf-probe-'));
    file = join(dir, 'deployments.yaml');
    writeFileSync(
      file,
      [
        'upstreams:',
        `  good: { kind: jobs, baseUrl: "${jobs.baseUrl}", secretEnv: GOOD_KEY }`,
        `  refused: { kind: jobs, baseUrl: "${jobs.baseUrl}", secretEnv: BAD_KEY }`,
        `  wrongpath: { kind: jobs, baseUrl: "${jobs.url}", secretEnv: GOOD_KEY }`,
        `  dead: { kind: jobs, baseUrl: "${await refusedUrl()}", secretEnv: GOOD_KEY }`,
        `  relay: { kind: openai-videos, baseUrl: "${openai.baseUrl}", secretEnv: GOOD_KEY }`,
        `  relay-api: { kind: openai-videos, baseUrl: "${jobs.baseUrl}", secretEnv: GOOD_KEY }`,
        `  repl: { kind: replicate, baseUrl: "${replicate.baseUrl}", secretEnv: GOOD_KEY }`,
        `  repl-refused: { kind: replicate, baseUrl: "${replicate.baseUrl}", secretEnv: BAD_KEY }`,
        `  fal: { kind: fal-queue, baseUrl: "${fal.baseUrl}", secretEnv: GOOD_KEY }`,
        `  fal-refused: { kind: fal-queue, baseUrl: "${fal.baseUrl}", secretEnv: BAD_KEY }`,
        '  local: { kind: simulator }',
        'models:',
        '  vendor_d/family_d/reference-to-video:',
        '    - { upstream: good }',
        '    - { upstream: refused }',
        '    - { upstream: wrongpath }',
        '    - { upstream: dead }',
        '    - { upstream: local }',
        '    - { upstream: fal, upstreamModel: fal-ai/family-d/reference-to-video }',
        '    - { upstream: fal-refused, upstreamModel: fal-ai/family-d/reference-to-video }',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await Promise.all([jobs.close(), openai.close(), replicate.close(), fal.close()]);
  });

  const expected = [
    /upstream good \(jobs\): ok \(GET \/api\/v1\/jobs: status 200\)/,
    /upstream refused \(jobs\): key refused \(GET \/api\/v1\/jobs: status 401\): check the key in its secretEnv variable/,
    /upstream wrongpath \(jobs\): wrong path \(GET \/jobs: status 404\): check the path of baseUrl/,
    /upstream dead \(jobs\): unreachable \(GET \/api\/v1\/jobs: ECONNREFUSED\): check baseUrl and that the upstream is up/,
    /upstream relay \(openai-videos\): ok \(GET \/v1\/videos: status 200\)/,
    /upstream relay-api \(openai-videos\): wrong path \(GET \/api\/v1\/videos: status 404\)/,
    /upstream repl \(replicate\): ok \(GET \/v1\/account: status 200\)/,
    /upstream repl-refused \(replicate\): key refused \(GET \/v1\/account: status 401\)/,
    // fal: the status of a request never made, under the routed app's owner and alias (404: the queue answered, the key taken).
    /upstream fal \(fal-queue\): ok \(GET \/fal-ai\/family-d\/requests\/0{8}-0{4}-0{4}-0{4}-0{12}\/status: status 404\)/,
    /upstream fal-refused \(fal-queue\): key refused \(GET \/fal-ai\/family-d\/requests\/\S+\/status: status 401\)/,
  ];

  it('deployments check --probe: one line per upstream, exit 1 when one fails, no key, nothing created', async () => {
    const { code, out } = await run(['deployments', 'check', '--probe', '--deployments', file], {
      GOOD_KEY: GOOD,
      BAD_KEY: BAD,
    });
    for (const line of expected) expect(out).toMatch(line);
    expect(out).not.toMatch(/upstream local/);
    expect(out).not.toContain(GOOD);
    expect(out).not.toContain(BAD);
    expect(code).toBe(1);
    expect(jobs.submits).toHaveLength(0);
    expect(replicate.submits).toHaveLength(0);
    expect(openai.deletes).toHaveLength(0);
  }, 60_000);

  it('deployments check --probe exits 0 when every upstream answers', async () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(
      good,
      `upstreams:\n  good: { kind: jobs, baseUrl: "${jobs.baseUrl}", secretEnv: GOOD_KEY }\nmodels:\n  vendor_d/family_d/reference-to-video:\n    - { upstream: good }\n`,
    );
    const { code, out } = await run(['deployments', 'check', '--probe', '--deployments', good], { GOOD_KEY: GOOD });
    expect(out).toMatch(/upstream good \(jobs\): ok/);
    expect(code).toBe(0);
  }, 60_000);

  it('serve logs the same lines once it listens, without waiting for them', async () => {
    const { out } = await run(
      ['serve', '--migrate', '--port', '0', '--deployments', file],
      {
        GOOD_KEY: GOOD,
        BAD_KEY: BAD,
        MEDIAFORGE_DB: `sqlite:${join(dir, 'db.sqlite')}`,
        MEDIAFORGE_DATA_DIR: dir,
        MEDIAFORGE_SECRET: 'test-secret',
      },
      (text) => expected.every((line) => line.test(text)),
    );
    for (const line of expected) expect(out).toMatch(line);
    expect(out.indexOf('mediaforge listening on')).toBeGreaterThanOrEqual(0);
    expect(out).not.toContain(GOOD);
    expect(out).not.toContain(BAD);
    const warn = out.split('\n').find((l) => l.includes('upstream dead (jobs)'));
    expect(JSON.parse(warn ?? '{}').level).toBe(40);
  }, 90_000);
});

/**
 * Issue 37: each of the six vendor profiles has a probe, a request its vendor publishes that creates
 * nothing (spec/providers/<vendor>.yaml says which), answered by the loopback vendor servers as the
 * vendor does: ok with the operator's key, key refused without it (MiniMax's refusal is a 200 whose
 * base_resp says 1004), nothing submitted.
 */
describe("the vendor profiles' probes", () => {
  const ark = new ArkServer({ apiKey: GOOD });
  const dashscope = new DashscopeServer({ apiKey: GOOD });
  const kling = new KlingServer({ accessKey: 'ak-probe', secretKey: 'sk-probe-secret' });
  const luma = new LumaServer({ apiKey: GOOD });
  const minimax = new MinimaxServer({ apiKey: GOOD });
  const runway = new RunwayServer({ apiKey: GOOD });
  let file: string;
  beforeAll(async () => {
    await Promise.all([ark.start(), dashscope.start(), kling.start(), luma.start(), minimax.start(), runway.start()]);
    const upstreams: [string, string, string][] = [
      ['ark', ark.url, 'GOOD_KEY'],
      ['dashscope', dashscope.url, 'GOOD_KEY'],
      ['kling', kling.baseUrl, 'KLING_KEYS'],
      ['luma', luma.baseUrl, 'GOOD_KEY'],
      ['minimax', minimax.url, 'GOOD_KEY'],
      ['runway', runway.baseUrl, 'GOOD_KEY'],
    ];
    file = join(mkdtempSync(join(tmpdir(), 'mf-probe-vendors-')), 'deployments.yaml');
    writeFileSync(
      file,
      [
        'upstreams:',
        ...upstreams.flatMap(([kind, url, good]) => [
          `  ${kind}-good: { kind: ${kind}, baseUrl: "${url}", secretEnv: ${good} }`,
          `  ${kind}-refused: { kind: ${kind}, baseUrl: "${url}", secretEnv: ${kind === 'kling' ? 'KLING_WRONG' : 'BAD_KEY'} }`,
        ]),
        'models:',
        '  vendor_b/family_c-2.6/text-to-video:',
        ...upstreams.flatMap(([kind]) => [
          `    - { upstream: ${kind}-good, upstreamModel: m }`,
          `    - { upstream: ${kind}-refused, upstreamModel: m }`,
        ]),
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await Promise.all([ark.close(), dashscope.close(), kling.close(), luma.close(), minimax.close(), runway.close()]);
  });

  it('deployments check --probe: ok with the key, key refused without it, for all six; nothing created', async () => {
    const { code, out } = await run(['deployments', 'check', '--probe', '--deployments', file], {
      GOOD_KEY: GOOD,
      BAD_KEY: BAD,
      KLING_KEYS: 'ak-probe:sk-probe-secret',
      KLING_WRONG: 'ak-probe:sk-wrong-secret',
    });
    const lines = [
      /upstream ark-good \(ark\): ok \(GET \/api\/v3\/contents\/generations\/tasks\?page_num=1&page_size=1: status 200\)/,
      /upstream ark-refused \(ark\): key refused \(GET \/api\/v3\/contents\/generations\/tasks\S*: status 401\)/,
      /upstream dashscope-good \(dashscope\): ok \(GET \/api\/v1\/tasks\/0{8}-0{4}-0{4}-0{4}-0{12}: status 200\)/,
      /upstream dashscope-refused \(dashscope\): key refused \(\S+ \S+: status 401\)/,
      /upstream kling-good \(kling\): ok \(GET \/v1\/videos\/text2video\?pageNum=1&pageSize=1: status 200\)/,
      /upstream kling-refused \(kling\): key refused \(\S+ \S+: status 401\)/,
      /upstream luma-good \(luma\): ok \(GET \S+: status 404\)/,
      /upstream luma-refused \(luma\): key refused \(\S+ \S+: status 401\)/,
      /upstream minimax-good \(minimax\): ok \(GET \/v1\/query\/video_generation\?task_id=0: status 200\)/,
      /upstream minimax-refused \(minimax\): key refused \(GET \/v1\/query\/video_generation\?task_id=0: code 1004\)/,
      /upstream runway-good \(runway\): ok \(GET \S+: status 404\)/,
      /upstream runway-refused \(runway\): key refused \(\S+ \S+: status 401\)/,
    ];
    for (const line of lines) expect(out).toMatch(line);
    expect(out).not.toMatch(/not probed/);
    expect(out).not.toContain(GOOD);
    expect(out).not.toContain('sk-probe-secret');
    expect(code).toBe(1);
    expect(ark.lists).toBeGreaterThanOrEqual(1);
    expect(kling.lists).toBeGreaterThanOrEqual(1);
    for (const server of [ark, dashscope, kling, luma, minimax, runway]) expect(server.submits).toHaveLength(0);
  }, 60_000);
});
