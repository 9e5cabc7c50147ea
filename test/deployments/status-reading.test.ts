/**
 * `deployments status` (issue 28): it only reads, so it runs without the upstreams' keys; without
 * --deployments it reads the plan the running service recorded at its start (not the simulator
 * alone), and its text form says why a deployment last failed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask } from '../http/helpers.js';
import { ROOT } from '../support/build.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startTestService, type TestService } from '../support/service.js';

const run = promisify(execFile);
const KEY = 'sk-status-right-key';
const WRONG = 'sk-status-wrong-key';

describe('deployments status', () => {
  const jobs = new JobsProtocolServer({ apiKey: KEY });
  let t: TestService;
  let file: string;
  // Only the database: no upstream key in this environment.
  const cli = (...args: string[]) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'RELAY_KEY'));
    return run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'deployments', 'status', ...args], {
      cwd: ROOT,
      env: { ...env, MEDIAFORGE_DB: t.config.dbUrl },
    });
  };

  beforeAll(async () => {
    await jobs.start();
    const text = [
      'upstreams:',
      `  relay: { kind: jobs, baseUrl: "${jobs.baseUrl}", secretEnv: RELAY_KEY }`,
      'models:',
      '  vendor_d/family_d/reference-to-video: [{ upstream: relay }]',
      '',
    ].join('\n');
    file = join(mkdtempSync(join(tmpdir(), 'mf-status-')), 'deployments.yaml');
    writeFileSync(file, text);
    // The service runs with a key the upstream refuses: its submits fail, and that is what status must say.
    t = await startTestService({}, { deploymentsPlan: parseDeployments(file, text, { RELAY_KEY: WRONG }) });
  });
  afterAll(async () => {
    await t?.close();
    await jobs.close();
  });

  it('reads the served plan without a key or a file, and gives the last failure reason in text', async () => {
    const { apiKey } = await t.account(100_000);
    expect((await createTask(t, apiKey, bodyD('a task the upstream refuses'))).status).toBe(202);
    // The last failure is written with the call; the counts reach the database at the worker's next
    // flush (every two seconds, runtime/routing/upstream-stats.ts): wait for both.
    type Report = { deployments: { name: string; lastFailure: string | null; failures: Record<string, number> }[] };
    const recorded = (r: Report) =>
      !!r.deployments[0]?.lastFailure && Object.values(r.deployments[0].failures).some((n) => n > 0);
    let report: Report = { deployments: [] };
    for (let i = 0; i < 60 && !recorded(report); i++) {
      report = JSON.parse((await cli('--json')).stdout);
      if (!recorded(report)) await new Promise((r) => setTimeout(r, 250));
    }
    expect(report.deployments.map((d) => d.name)).toEqual(['relay']);
    const text = (await cli()).stdout.trim().split('\n').slice(1);
    expect(text).toHaveLength(1);
    expect(text[0]).toMatch(
      /^relay \(jobs\) \w+ in flight \d+ submits \d+ failures [1-9]\d* .*last failure at \S+: .*status 401/,
    );
    expect(text[0]).not.toContain(WRONG);
  }, 60_000);

  it('reads a named file without its key', async () => {
    const { stdout } = await cli('--deployments', file);
    expect(stdout.split('\n')[1]).toMatch(/^relay \(jobs\) /);
  }, 30_000);

  // Issue 37 point 8: a status read from the wrong database, or of a deployment no task reached,
  // looked like one of a deployment that answers (`ok`), and did not say which database it read.
  it('names the database it read and says `no record` for a deployment the database holds nothing of', async () => {
    const other = join(mkdtempSync(join(tmpdir(), 'mf-status-')), 'deployments.yaml');
    writeFileSync(
      other,
      [
        'upstreams:',
        `  unused: { kind: jobs, baseUrl: "${jobs.baseUrl}", secretEnv: RELAY_KEY }`,
        'models:',
        '  vendor_d/family_d/reference-to-video: [{ upstream: unused }]',
        '',
      ].join('\n'),
    );
    const sqlite = t.config.dbUrl.startsWith('sqlite:');
    // The name the operator should read: a SQLite file's absolute path, a PostgreSQL URL without its password.
    const expected = sqlite ? t.config.dbUrl.slice('sqlite:'.length) : t.config.dbUrl;
    // Given as a path relative to where the command runs (SQLite), or with a password (PostgreSQL; trust auth ignores it).
    const given = sqlite
      ? `sqlite:${relative(ROOT, expected)}`
      : t.config.dbUrl.replace('://postgres@', '://postgres:status-db-password@');
    expect(given).not.toBe(t.config.dbUrl);
    const opts = { cwd: ROOT, env: { ...process.env, MEDIAFORGE_DB: given } };
    const command = [join(ROOT, 'bin/mediaforge.js'), 'deployments', 'status', '--deployments', other];
    const text = (await run(process.execPath, command, opts)).stdout;
    expect(text.split('\n')[0]).toBe(`database ${expected}`);
    expect(text.split('\n')[1]).toMatch(/^unused \(jobs\) no record in flight 0 submits 0 failures 0$/);
    expect(text).not.toContain('status-db-password');
    const json = JSON.parse((await run(process.execPath, [...command, '--json'], opts)).stdout);
    expect(json.database).toBe(expected);
    expect(json.deployments.map((d: { name: string; state: string }) => [d.name, d.state])).toEqual([
      ['unused', 'no record'],
    ]);
  }, 30_000);
});
