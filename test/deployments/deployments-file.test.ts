import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { DeploymentsFileError, parseDeployments } from '../../runtime/routing/deployments-file.js';
import { DEFAULT_COOLDOWN } from '../../runtime/routing/router.js';
import { ROOT } from '../support/root.js';
import { startTestService } from '../support/service.js';
import { IMAGE } from '../http/helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'bin/mediaforge.js');
const MODEL = 'vendor_d/family_d/reference-to-video';
const OTHER = 'vendor_a/family_a-2.0-mini/reference-to-video';

/** The problems of a file, or [] when it is accepted. */
function problems(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseDeployments('deployments.yaml', text, env);
    return [];
  } catch (error) {
    if (error instanceof DeploymentsFileError) return error.problems;
    throw error;
  }
}

const lines = (...l: string[]) => l.join('\n');
const RELAY = '  relay: { kind: jobs, baseUrl: "https://relay.example.invalid/api/v1", secretEnv: RELAY_KEY }';
const ENV = { RELAY_KEY: 'sk-relay' };

/** Each broken file and the one problem it must be reported with, at its line and column. */
const BROKEN: [string, { given: string; env?: NodeJS.ProcessEnv; want: string }][] = [
  [
    'an unknown model id',
    {
      given: lines('upstreams:', RELAY, 'models:', '  vendor_x/nope-1.0/text-to-video:', '    - upstream: relay'),
      want: 'deployments.yaml:4:3: unknown model id "vendor_x/nope-1.0/text-to-video" (GET /api/v1/models lists the catalogue)',
    },
  ],
  [
    'an unknown upstream',
    {
      given: lines('upstreams:', RELAY, 'models:', `  ${MODEL}:`, '    - upstream: backup'),
      want: 'deployments.yaml:5:7: unknown upstream "backup" (relay)',
    },
  ],
  [
    'a secret variable that is not set, named',
    {
      given: lines('upstreams:', RELAY, 'models:', `  ${MODEL}:`, '    - upstream: relay'),
      env: {},
      want: 'deployments.yaml:2:73: the environment variable RELAY_KEY (the key of upstream relay) is not set',
    },
  ],
  [
    'a bad kind',
    {
      given: lines('upstreams:', '  relay: { kind: grpc, baseUrl: "https://x.example.invalid" }', 'models: {}'),
      want: 'deployments.yaml:2:12: kind must be one of simulator, openai-videos, jobs, fal-queue, replicate',
    },
  ],
  [
    'a replicate route without its Replicate model (the catalogue id is never owner/name)',
    {
      given: lines(
        'upstreams:',
        '  r8: { kind: replicate, baseUrl: "https://api.replicate.invalid/v1" }',
        'models:',
        `  ${MODEL}:`,
        '    - upstream: r8',
      ),
      want: 'deployments.yaml:5:7: an upstream of kind replicate needs upstreamModel: the Replicate model as owner/name or owner/name:version',
    },
  ],
  [
    'a replicate upstreamModel that is not owner/name[:version]',
    {
      given: lines(
        'upstreams:',
        '  r8: { kind: replicate, baseUrl: "https://api.replicate.invalid/v1" }',
        'models:',
        `  ${MODEL}:`,
        '    - { upstream: r8, upstreamModel: a/b/c }',
      ),
      want: 'deployments.yaml:5:23: an upstream of kind replicate needs upstreamModel',
    },
  ],
  [
    'a model routed to a profile that lacks a field the model requires (derived, not written in the profile)',
    {
      given: lines(
        'upstreams:',
        '  wan: { kind: dashscope, baseUrl: "https://dashscope.example.invalid" }',
        'models:',
        `  ${MODEL}:`,
        '    - upstream: wan',
      ),
      want: `deployments.yaml:5:7: an upstream of kind dashscope cannot run ${MODEL}: it requires reference_image_urls, which spec/providers/dashscope.yaml does not take (unsupported)`,
    },
  ],
  [
    'a model routed to a profile with no submit path for its mode',
    {
      given: lines(
        'upstreams:',
        '  gen: { kind: runway, baseUrl: "https://runway.example.invalid" }',
        'models:',
        `  ${MODEL}:`,
        '    - upstream: gen',
      ),
      want: `deployments.yaml:5:7: an upstream of kind runway cannot run ${MODEL}: spec/providers/runway.yaml has no submit path for mode reference-to-video`,
    },
  ],
  [
    'a key in the base URL',
    {
      given: lines(
        'upstreams:',
        '  relay: { kind: jobs, baseUrl: "https://user:secret@relay.example.invalid/api/v1" }',
        'models: {}',
      ),
      want: 'deployments.yaml:2:24: baseUrl must not carry credentials: name the variable holding the key in secretEnv',
    },
  ],
  [
    'no base URL',
    {
      given: lines('upstreams:', '  relay: { kind: openai-videos }', 'models: {}'),
      want: 'deployments.yaml:2:3: upstream relay needs a baseUrl',
    },
  ],
  [
    'maxInFlight 0',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, maxInFlight: 0 }', 'models: {}'),
      want: 'deployments.yaml:2:27: maxInFlight must be a whole number >= 1',
    },
  ],
  [
    'maxInFlightPerAccount 0',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, maxInFlight: 4, maxInFlightPerAccount: 0 }', 'models: {}'),
      want: 'deployments.yaml:2:43: maxInFlightPerAccount must be a whole number >= 1',
    },
  ],
  [
    'maxInFlightPerAccount above maxInFlight',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, maxInFlight: 4, maxInFlightPerAccount: 5 }', 'models: {}'),
      want: 'deployments.yaml:2:43: maxInFlightPerAccount must be at most maxInFlight (4)',
    },
  ],
  [
    'maxInFlightPerAccount without maxInFlight',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, maxInFlightPerAccount: 2 }', 'models: {}'),
      want: 'deployments.yaml:2:27: maxInFlightPerAccount is a share of maxInFlight: set maxInFlight too',
    },
  ],
  [
    'a cost as a float',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, cost: { perSecond: 0.05 } }', 'models: {}'),
      want: 'deployments.yaml:2:35: perSecond must be a USD amount as text, at most six decimals ("0.05")',
    },
  ],
  [
    'an upstream listed twice for a model',
    {
      given: lines(
        'upstreams:',
        '  sim: { kind: simulator }',
        'models:',
        `  ${MODEL}:`,
        '    - upstream: sim',
        '    - upstream: sim',
      ),
      want: `deployments.yaml:6:7: upstream sim is listed twice for ${MODEL}`,
    },
  ],
  [
    'weight 0',
    {
      given: lines(
        'upstreams:',
        '  sim: { kind: simulator }',
        'models:',
        `  ${MODEL}:`,
        '    - { upstream: sim, weight: 0 }',
      ),
      want: 'deployments.yaml:5:24: weight must be a whole number >= 1',
    },
  ],
  [
    'a simulator with a base URL',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, baseUrl: "https://x.example.invalid" }', 'models: {}'),
      want: 'deployments.yaml:2:27: an upstream of kind simulator takes no baseUrl',
    },
  ],
  [
    'references neither stored nor original',
    {
      given: lines(
        'upstreams:',
        '  up: { kind: jobs, baseUrl: "https://up.example.invalid", references: later }',
        'models: {}',
      ),
      want: 'deployments.yaml:2:',
    },
  ],
  [
    'references on a simulator',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, references: stored }', 'models: {}'),
      want: 'deployments.yaml:2:27: an upstream of kind simulator takes no references',
    },
  ],
  [
    'an unknown key',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, timeout: 5 }', 'models: {}'),
      want: 'deployments.yaml:2:27: unknown key "timeout" (kind, baseUrl, secretEnv, maxInFlight, maxInFlightPerAccount, callbacks, cost, submitTimeoutSeconds, references)',
    },
  ],
  [
    'submitTimeoutSeconds 0 (issue 37)',
    {
      given: lines(
        'upstreams:',
        '  relay: { kind: jobs, baseUrl: "https://relay.example.invalid/api/v1", submitTimeoutSeconds: 0 }',
        'models: {}',
      ),
      want: 'deployments.yaml:2:73: submitTimeoutSeconds must be a whole number from 1 to 600 (how long a submit waits for its answer)',
    },
  ],
  [
    'submitTimeoutSeconds on a simulator (issue 37)',
    {
      given: lines('upstreams:', '  sim: { kind: simulator, submitTimeoutSeconds: 30 }', 'models: {}'),
      want: 'deployments.yaml:2:27: an upstream of kind simulator takes no submitTimeoutSeconds',
    },
  ],
  [
    'broken YAML',
    { given: lines('upstreams:', '  sim: { kind: simulator', 'models: {}'), want: 'deployments.yaml:3:1:' },
  ],
  [
    'a key given twice',
    {
      given: lines('upstreams:', '  sim: { kind: simulator }', '  sim: { kind: simulator }', 'models: {}'),
      want: 'deployments.yaml:3:3: Map keys must be unique',
    },
  ],
  [
    'no models',
    {
      given: lines('upstreams:', '  sim: { kind: simulator }'),
      want: 'deployments.yaml:1:1: models must be a map of model ids to their deployments',
    },
  ],
  [
    'callbacks on openai-videos (the Videos API has none)',
    {
      given: lines(
        'upstreams:',
        '  relay: { kind: openai-videos, baseUrl: "https://relay.example.invalid/v1", secretEnv: RELAY_KEY, callbacks: true }',
        'models:',
        '  vendor_b/family_c-2.6/reference-to-video: [{ upstream: relay }]',
      ),
      env: { ...ENV, MEDIAFORGE_PUBLIC_URL: 'https://edge.example.invalid' },
      want: 'deployments.yaml:2:100: an upstream of kind openai-videos takes no callbacks',
    },
  ],
  [
    'callbacks without MEDIAFORGE_PUBLIC_URL on an upstream elsewhere',
    {
      given: lines(
        'upstreams:',
        RELAY.replace(' }', ', callbacks: true }'),
        'models:',
        `  ${MODEL}: [{ upstream: relay }]`,
      ),
      want: 'deployments.yaml:2:95: callbacks: true needs MEDIAFORGE_PUBLIC_URL, the address upstream relay calls back',
    },
  ],
  [
    'a file that routes no model',
    {
      given: lines('upstreams:', RELAY, 'models: {}'),
      want: 'deployments.yaml:3:1: the file routes no model: serve would serve nothing',
    },
  ],
  [
    'a bad cool-down',
    {
      given: lines('upstreams: {}', 'models: {}', 'cooldown: { failures: 0 }'),
      want: 'deployments.yaml:3:13: failures must be a whole number >= 1 (failing tasks of one owner within the window that cool the deployment for that owner)',
    },
  ],
  [
    'a failure share over 100 percent',
    {
      given: lines('upstreams: {}', 'models: {}', 'cooldown: { minFailurePercent: 150 }'),
      want: "deployments.yaml:3:13: minFailurePercent must be at most 100 (the failed share of the deployment's calls within the window)",
    },
  ],
  [
    'a single-tenant switch that is not true or false',
    {
      given: lines('upstreams: {}', 'models: {}', 'cooldown: { singleTenant: yes please }'),
      want: 'deployments.yaml:3:13: singleTenant is true or false',
    },
  ],
  [
    'an unknown cool-down key',
    {
      given: lines('upstreams: {}', 'models: {}', 'cooldown: { owners: 3 }'),
      want: 'deployments.yaml:3:13: unknown key "owners" (failures, seconds, windowSeconds, minTasks, minOwners, minFailurePercent, probeSeconds, singleTenant)',
    },
  ],
];

describe('the deployments file', () => {
  it.each([
    [
      'MEDIAFORGE_PUBLIC_URL set',
      'https://relay.example.invalid/api/v1',
      { MEDIAFORGE_PUBLIC_URL: 'https://edge.example.invalid' },
    ],
    ['a loopback upstream (it reaches the listen address)', 'http://127.0.0.1:9/api/v1', {}],
    ['a localhost upstream', 'http://localhost:9/api/v1', {}],
  ])('takes callbacks: true with %s', (_name, baseUrl, env) => {
    const text = lines(
      'upstreams:',
      `  relay: { kind: jobs, baseUrl: "${baseUrl}", secretEnv: RELAY_KEY, callbacks: true }`,
      'models:',
      `  ${MODEL}: [{ upstream: relay }]`,
    );
    expect(problems(text, { ...ENV, ...env })).toEqual([]);
  });

  it.each(BROKEN)('refuses %s with file:line:col', (_name, { given, env, want }) => {
    const found = problems(given, env ?? ENV);
    expect(found.length, found.join('\n')).toBe(1);
    expect(found[0].startsWith(want), found[0]).toBe(true);
  });

  it('reports every problem of a file at once', () => {
    const found = problems(
      lines(
        'upstreams:',
        '  a: { kind: grpc }',
        '  b: { kind: simulator, maxInFlight: -1 }',
        'models:',
        '  vendor_x/x-1/text-to-video: [{ upstream: a }]',
      ),
    );
    expect(found.map((p) => p.split(': ')[0])).toEqual([
      'deployments.yaml:2:8',
      'deployments.yaml:3:25',
      'deployments.yaml:5:3',
    ]);
  });

  it('reads a good file: routes by model, tiers and weights, costs in integer millionths, the key from its variable', () => {
    const plan = parseDeployments(
      'deployments.yaml',
      lines(
        'upstreams:',
        RELAY.replace(' }', ', maxInFlight: 20, maxInFlightPerAccount: 5, cost: { perSecond: "0.035" } }'),
        '  local: { kind: simulator }',
        'models:',
        `  ${MODEL}:`,
        '    - { upstream: relay, upstreamModel: wan-2.6-r2v, priority: 10, weight: 3, cost: { perVideo: "0.4" } }',
        '    - { upstream: local, priority: 5 }',
        `  ${OTHER}: [{ upstream: relay }]`,
        'cooldown: { failures: 5, seconds: 120 }',
      ),
      ENV,
    );
    expect(plan.upstreams.get('relay')).toMatchObject({
      kind: 'jobs',
      baseUrl: 'https://relay.example.invalid/api/v1',
      apiKey: 'sk-relay',
      maxInFlight: 20,
      maxInFlightPerAccount: 5,
      callbacks: false,
      cost: { perSecondMicros: 35_000, perVideoMicros: 0 },
    });
    expect(plan.routes.get(MODEL)).toEqual([
      {
        upstream: 'relay',
        upstreamModel: 'wan-2.6-r2v',
        priority: 10,
        weight: 3,
        cost: { perSecondMicros: 0, perVideoMicros: 400_000 },
      },
      { upstream: 'local', upstreamModel: MODEL, priority: 5, weight: 1 },
    ]);
    // A route without its own cost takes its upstream's.
    expect(plan.routes.get(OTHER)).toEqual([
      {
        upstream: 'relay',
        upstreamModel: OTHER,
        priority: 0,
        weight: 1,
        cost: { perSecondMicros: 35_000, perVideoMicros: 0 },
      },
    ]);
    expect(plan.cooldown).toEqual({ ...DEFAULT_COOLDOWN, failures: 5, ms: 120_000 });
  });

  it('routes only what the file names: GET /models lists those, and a model routed to a simulator upstream keeps simulating', async () => {
    const plan = parseDeployments(
      'deployments.yaml',
      lines('upstreams:', '  local: { kind: simulator }', 'models:', `  ${MODEL}: [{ upstream: local }]`),
    );
    const t = await startTestService({}, { deploymentsPlan: plan });
    try {
      const { accountId, apiKey } = await t.account(100);
      const models = await t.call('GET', '/api/v1/models', { key: apiKey });
      expect(models.body.data.items.map((m: { id: string }) => m.id)).toEqual([MODEL]);
      const compat = await t.call('GET', '/v1/models', { key: apiKey });
      expect(compat.body.data.map((m: { id: string }) => m.id)).toEqual([MODEL]);
      const created = await t.call('POST', '/api/v1/jobs/createTask?wait=10', {
        key: apiKey,
        body: {
          model: MODEL,
          input: { prompt: 'a fox, Picture 1', reference_image_urls: [IMAGE] },
        },
      });
      expect(created.body.data.state).toBe('succeeded');
      const refused = await t.call('POST', '/api/v1/jobs/createTask', {
        key: apiKey,
        body: { model: OTHER, input: { prompt: 'a fox', reference_image_urls: [IMAGE] } },
      });
      expect([refused.status, refused.body.code]).toEqual([503, 50301]);
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: created.body.data.credits });
      const row = await t.service.ctx.db.kysely
        .selectFrom('tasks')
        .select('deployment')
        .where('id', '=', created.body.data.taskId)
        .executeTakeFirstOrThrow();
      expect(row.deployment).toBe('local');
    } finally {
      await t.close();
    }
  });

  it('without a file every model of the catalogue is served, on the embedded simulator', async () => {
    const t = await startTestService();
    try {
      const { apiKey } = await t.account(100);
      const models = await t.call('GET', '/api/v1/models', { key: apiKey });
      expect(models.body.data.items.length).toBe(catalogue.size);
      expect((await t.call('GET', '/readyz')).body.deployments).toMatchObject([
        {
          name: 'simulator',
          kind: 'simulator',
          state: 'ok',
          inFlight: 0,
          maxInFlight: null,
          maxInFlightPerAccount: null,
        },
      ]);
    } finally {
      await t.close();
    }
  });

  describe('on the command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediaforge-deployments-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      run(process.execPath, [CLI, ...args], {
        env: { ...process.env, MEDIAFORGE_DB: `sqlite:${join(dir, 'db.sqlite')}`, MEDIAFORGE_DATA_DIR: dir, ...env },
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );

    it('`deployments check` says ok, or lists the problems as file:line:col and exits 1', async () => {
      const good = file('good.yaml', lines('upstreams:', RELAY, 'models:', `  ${MODEL}: [{ upstream: relay }]`));
      const ok = await cli(['deployments', 'check', '--deployments', good, '--json'], ENV);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({
        ok: true,
        file: good,
        upstreams: [{ name: 'relay', kind: 'jobs' }],
        models: [MODEL],
      });
      const bad = await cli(['deployments', 'check', '--deployments', good]);
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim()).toBe(
        `${good}:2:73: the environment variable RELAY_KEY (the key of upstream relay) is not set`,
      );
    });

    it('`deployments check` warns of a model whose default request no route can take, naming the field, and lists what each kind used does not serve', async () => {
      const adaptive = 'vendor_a/family_a-2.5/text-to-video';
      const path = file(
        'runway.yaml',
        lines(
          'upstreams:',
          '  gen: { kind: runway, baseUrl: "https://runway.example.invalid" }',
          'models:',
          `  ${adaptive}: [{ upstream: gen }]`,
          `  vendor_b/family_c-2.6/text-to-video: [{ upstream: gen }]`,
        ),
      );
      const text = await cli(['deployments', 'check', '--deployments', path]);
      expect(text.code).toBe(0);
      const out = text.stdout.split('\n');
      expect(out[0]).toBe(`${path}: ok (1 upstream, 2 models routed)`);
      // Runway has no size for adaptive, the model's default ratio: warned, with what the route takes.
      expect(out).toContain(
        `warning: ${adaptive}: its default request cannot be served by any of its routes: input.aspect_ratio adaptive (the deployments take 21:9, 16:9, 4:3, 1:1, 3:4, 9:16): a request that leaves aspect_ratio out is answered 400 40030`,
      );
      expect(out.filter((l) => l.startsWith('warning:'))).toHaveLength(1);
      expect(out).toContain('kind runway does not serve 30 models of the catalogue:');
      expect(out).toContain(`  ${MODEL}: spec/providers/runway.yaml has no submit path for mode reference-to-video`);
      const json = JSON.parse((await cli(['deployments', 'check', '--deployments', path, '--json'])).stdout);
      expect(json.warnings).toEqual([
        {
          model: adaptive,
          refusals: [
            { field: 'aspect_ratio', value: 'adaptive', takes: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] },
          ],
        },
      ]);
      expect(json.notServed.runway).toHaveLength(30);
    });

    it('`serve` refuses to start on a broken file, naming the problem', async () => {
      const broken = file('broken.yaml', lines('upstreams:', RELAY, 'models:', `  ${MODEL}: [{ upstream: backup }]`));
      const served = await cli(['serve', '--port', '0', '--migrate', '--deployments', broken], ENV);
      expect(served.code).toBe(1);
      expect(served.stderr).toContain(`${broken}:4:44: unknown upstream "backup" (relay)`);
    });
  });
});
