import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Context } from '../../../runtime/context.js';
import { CallWindow } from '../../../runtime/routing/call-window.js';
import { trip } from '../../../runtime/routing/evidence.js';
import { deploymentStates, recordCallFailure, takeTrial } from '../../../runtime/routing/health.js';
import { ensureRow, recover } from '../../../runtime/routing/health-row.js';
import { recordProbe } from '../../../runtime/routing/probe-health.js';
import { DEFAULT_COOLDOWN, Deployments } from '../../../runtime/routing/router.js';
import type { Deployment } from '../../../runtime/deployments/deployment.js';
import { openDb, type Db } from '../../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../../runtime/storage/migrate.js';

/**
 * runtime/routing/health.ts and probe-health.ts: what happens to a deployment once it cooled for
 * everyone (a trip), on a real SQLite database with the clock given. Each row is a script of steps
 * from a fresh trip at NOW, and the states seen after each step.
 */
const NOW = 1_800_000_000_000;
const COOLDOWN = { ...DEFAULT_COOLDOWN, ms: 30_000, probeMs: 10_000 };

type Step =
  | { at: number; trial: boolean } // takeTrial's answer at that time
  | { at: number; trialFailed: true } // the trial call failed
  | { at: number; trialAnswered: true }
  | { at: number; probe: 'ok' | 'unreachable' | 'busy' };

describe('after a trip: half-open trials and probes', () => {
  let dir: string;
  let db: Db;
  let now = NOW;
  const deployments = new Deployments([{ name: 'relay', kind: 'jobs' } as Deployment], { cooldown: COOLDOWN });
  const ctx = () =>
    ({
      db,
      clock: { now: () => now },
      deployments,
      callWindow: new CallWindow(COOLDOWN.windowMs),
      log: { warn() {}, info() {} },
    }) as unknown as Context;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-half-open-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    db = await openDb(`sqlite:${join(dir, `${Date.now()}-${Math.random()}.db`)}`);
    await migrateToLatest(db);
    now = NOW;
    await ensureRow(db.kysely, 'relay', now);
    await trip(db.kysely, 'relay', now, COOLDOWN);
  });
  afterEach(async () => {
    await db.close();
  });

  const state = async () => (await deploymentStates(db.kysely, deployments, now))[0].state;

  it.each<[string, { given: Step[]; want: string[] }]>([
    ['no trial while it cools', { given: [{ at: 29_999, trial: false }], want: ['cooling'] }],
    [
      'one trial at a time once the cool-down is over',
      {
        given: [
          { at: 30_000, trial: true },
          { at: 30_001, trial: false },
        ],
        want: ['half-open', 'half-open'],
      },
    ],
    [
      'a trial held past two minutes (its process gone) is given to the next caller',
      {
        given: [
          { at: 30_000, trial: true },
          { at: 150_001, trial: true },
        ],
        want: ['half-open', 'half-open'],
      },
    ],
    [
      'a trial answered: ok for everyone',
      {
        given: [
          { at: 30_000, trial: true },
          { at: 31_000, trialAnswered: true },
        ],
        want: ['half-open', 'ok'],
      },
    ],
    [
      'a trial failed: cooling again, and two trips in a row are down',
      {
        given: [
          { at: 30_000, trial: true },
          { at: 31_000, trialFailed: true },
          { at: 60_999, trial: false },
        ],
        want: ['half-open', 'down', 'down'],
      },
    ],
    [
      'a probe answering while customers cool it: their cool-down runs its length',
      { given: [{ at: 1_000, probe: 'ok' }], want: ['cooling'] },
    ],
    [
      'a probe answering once the cool-down is over: ok without a customer',
      { given: [{ at: 30_000, probe: 'ok' }], want: ['ok'] },
    ],
    [
      'a probe failing: down for probeSeconds, then an answered probe recovers it at once',
      {
        given: [
          { at: 1_000, probe: 'unreachable' },
          { at: 10_999, trial: false },
          { at: 11_000, probe: 'ok' },
        ],
        want: ['down', 'down', 'ok'],
      },
    ],
    ['a probe answered 429 says nothing', { given: [{ at: 1_000, probe: 'busy' }], want: ['cooling'] }],
  ])('%s', async (_name, { given, want }) => {
    const seen: string[] = [];
    for (const step of given) {
      now = NOW + step.at;
      if ('trial' in step) expect(await takeTrial(ctx(), 'relay')).toBe(step.trial);
      else if ('trialFailed' in step)
        await recordCallFailure(ctx(), 'relay', 'submit', { failure: 'server', message: '500' }, { trial: true });
      else if ('trialAnswered' in step) await recover(ctx(), 'relay', 'trial call');
      else
        await recordProbe(
          ctx(),
          'relay',
          step.probe === 'ok'
            ? { ok: true, outcome: 'ok', status: 200, detail: 'GET /jobs: status 200' }
            : step.probe === 'busy'
              ? { ok: false, outcome: 'failed', status: 429, detail: 'GET /jobs: status 429' }
              : { ok: false, outcome: 'unreachable', detail: 'GET /jobs: ECONNREFUSED' },
        );
      seen.push(await state());
    }
    expect(seen).toEqual(want);
  });
});
