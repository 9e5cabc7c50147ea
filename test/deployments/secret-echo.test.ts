import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyD, MODEL_D } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { FalQueueServer } from '../../support/upstreams/fal-queue-server.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { ECHO_FORMS, ECHO_MARKS, echoPrompt, secretForms } from '../../support/upstreams/key-echo.js';
import { OpenAiVideosServer } from '../../support/upstreams/openai-videos-server.js';
import { ReplicateServer } from '../../support/upstreams/replicate-server.js';
import { call, startMediaforge, waitForTask, type MediaforgeProcess } from './support.js';

const run = promisify(execFile);
const METRICS_TOKEN = 'secret-echo-metrics-token';
const REDACTED = '[redacted]';

interface EchoServer {
  baseUrl: string;
  start(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Per protocol: the server (a key-echoing upstream, support/upstreams/key-echo.ts), the Authorization
 * scheme its adapter sends, and the operator's key, an `ACCESS:SECRET` pair whose secret needs
 * percent-encoding and matches none of scrubReason's shapes: only the redactor can hide it.
 */
const PROTOCOLS: [string, { server: () => EchoServer; scheme: string; key: string; upstreamModel?: string }][] = [
  [
    'jobs',
    {
      server: () => new JobsProtocolServer({ latencyMs: 100, echoKey: true }),
      scheme: 'Bearer',
      key: 'JobsAccess7Q2W:Jobs5ecret+ZX/CV=B',
    },
  ],
  [
    'openai-videos',
    {
      server: () => new OpenAiVideosServer({ latencyMs: 100, echoKey: true }),
      scheme: 'Bearer',
      key: 'OpenAccess7Q2W:Open5ecret+ZX/CV=B',
    },
  ],
  [
    'fal-queue',
    {
      server: () => new FalQueueServer({ latencyMs: 100, echoKey: true }),
      scheme: 'Key',
      key: 'FalAccess7Q2W:Fal5ecret+ZX/CV=B',
      upstreamModel: 'fal-ai/family-d/reference-to-video',
    },
  ],
  [
    'replicate',
    {
      server: () => new ReplicateServer({ latencyMs: 100, echoKey: true }),
      scheme: 'Bearer',
      key: 'R8Access7Q2W:R8Sec5ret+ZX/CV=B',
      upstreamModel: 'vendor-d/family-d-r2v',
    },
  ],
];

/** The forms of `key` found in `text` (none is the only right answer). */
function leaked(text: string, key: string): string[] {
  return secretForms(key).filter((form) => text.includes(form));
}

/**
 * Issue 25 N1: an upstream that writes the operator's key back into an error (a refused submit, a
 * failed job, a 401 to a submit or a poll), in every form (the Authorization header as sent,
 * the bare key, each part of ACCESS:SECRET, percent-encoded), never gets it in front of anyone: not
 * in the task's errorMessage (recordInfo, and /v1/videos' error), not in upstream_health's last
 * failure (/readyz detail with the metrics token, `deployments status` text and --json), not in
 * the service log of a real `mediaforge serve`, not in /metrics. Each place shows `[redacted]`
 * where the key was, so the echo is known to have reached it.
 */
describe.each(PROTOCOLS)(
  '%s: a key-echoing upstream',
  (protocol, { server: makeServer, scheme, key, upstreamModel }) => {
    let upstream: EchoServer;
    let proc: MediaforgeProcess;
    let apiKey: string;

    beforeAll(async () => {
      upstream = makeServer();
      await upstream.start();
      const route = upstreamModel ? `, upstreamModel: "${upstreamModel}"` : '';
      proc = await startMediaforge(
        `secret-echo-${protocol}`,
        {
          MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
          MEDIAFORGE_METRICS_TOKEN: METRICS_TOKEN,
          MEDIAFORGE_UPSTREAM_POLL_MS: '50',
          // The fallback the 401 cases end on: its 3 s default answer would be most of this suite's time.
          MEDIAFORGE_SIMULATOR_LATENCY_MS: '100',
          ECHO_UPSTREAM_KEY: key,
        },
        {
          'deployments.yaml': [
            'upstreams:',
            `  echoing: { kind: ${protocol}, baseUrl: "${upstream.baseUrl}", secretEnv: ECHO_UPSTREAM_KEY }`,
            '  fallback: { kind: simulator }',
            'models:',
            `  ${MODEL_D}:`,
            `    - { upstream: echoing, priority: 10${route} }`,
            '    - { upstream: fallback, priority: 5 }',
            // Every 401 below is one more failure in a row: the echoing upstream must stay in use.
            'cooldown: { failures: 1000, seconds: 1 }',
          ].join('\n'),
        },
      );
      apiKey = (await proc.account(100_000)).apiKey;
    }, 60_000);

    afterAll(async () => {
      await proc?.stop();
      await upstream?.close();
    });

    async function task(prompt: string) {
      const created = await call(proc.url, 'POST', '/api/v1/jobs/createTask', apiKey, bodyD(prompt));
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      return created.body.data.taskId as string;
    }

    async function operator(path: string) {
      const response = await fetch(`${proc.url}${path}`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(response.status).toBe(200);
      return response.text();
    }

    async function cli(...args: string[]) {
      const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), ...args], {
        env: { ...process.env, ...proc.env },
      });
      return stdout;
    }

    it.each(ECHO_FORMS.flatMap((form) => (['submit', 'status'] as const).map((place) => [place, form] as const)))(
      "the task's errorMessage when the upstream echoes the key at %s (%s): redacted in recordInfo and /v1/videos",
      async (place, form) => {
        const id = await task(echoPrompt(place, form));
        const done = await waitForTask(proc.url, apiKey, id);
        expect(done).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
        expect(done.errorMessage).toContain(ECHO_MARKS[form].replace(/ https:.*/, ''));
        expect(done.errorMessage).toContain(REDACTED);
        expect(leaked(done.errorMessage, key)).toEqual([]);
        if (form === 'header') expect(done.errorMessage).toContain(`${scheme} ${REDACTED}`);
        const video = await call(proc.url, 'GET', `/v1/videos/${id}`, apiKey);
        expect(video.status).toBe(200);
        expect(video.body).toMatchObject({ status: 'failed', error: { message: done.errorMessage } });
      },
      30_000,
    );

    it.each(ECHO_FORMS)(
      'a 401 to the submit that echoes the key (%s): the last failure in /readyz and deployments status is redacted',
      async (form) => {
        const id = await task(echoPrompt('unauthorized', form));
        // The operator's key refused: the task went to the next deployment.
        expect(await waitForTask(proc.url, apiKey, id)).toMatchObject({ state: 'succeeded' });
        const ready = JSON.parse(await operator('/readyz'));
        const echoing = ready.deployments.find((d: { name: string }) => d.name === 'echoing');
        expect(echoing.lastFailure).toMatch(/status 401/);
        expect(echoing.lastFailure).toContain(ECHO_MARKS[form]);
        expect(echoing.lastFailure).toContain(REDACTED);
        expect(leaked(JSON.stringify(ready), key)).toEqual([]);
        const [json, text] = await Promise.all([cli('deployments', 'status', '--json'), cli('deployments', 'status')]);
        const status = JSON.parse(json).deployments.find((d: { name: string }) => d.name === 'echoing');
        expect(status.lastFailure).toBe(echoing.lastFailure);
        expect(leaked(json, key)).toEqual([]);
        expect(text).toMatch(/^echoing \(/m);
        expect(leaked(text, key)).toEqual([]);
      },
      60_000,
    );

    it.each(ECHO_FORMS)(
      'a 401 to a poll that echoes the key (%s): the service log says so, redacted',
      async (form) => {
        const id = await task(echoPrompt('poll-unauthorized', form));
        const deadline = Date.now() + 20_000;
        const line = () =>
          proc.server
            .output()
            .split('\n')
            .find((l) => l.includes(id) && l.includes('poll failed'));
        while (!line() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(line()).toContain('status 401');
        expect(line()).toContain(ECHO_MARKS[form]);
        expect(line()).toContain(REDACTED);
        expect(leaked(line()!, key)).toEqual([]);
      },
      30_000,
    );

    it('nothing the service wrote or answers holds the key: its whole log, /metrics, /readyz', async () => {
      const log = proc.server.output();
      expect(log).toContain(REDACTED);
      expect(leaked(log, key)).toEqual([]);
      expect(leaked(await operator('/metrics'), key)).toEqual([]);
      expect(leaked(await operator('/readyz'), key)).toEqual([]);
    });
  },
);
