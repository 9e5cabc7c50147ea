import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../runtime/config.js';
import { startTestService, type TestService, type TestServiceOptions } from './service.js';

export interface SuiteService {
  /** The service, set once the suite's beforeAll has run. */
  t: TestService;
  /** With `credits`, one account holding them (set in the same beforeAll). */
  account: { accountId: string; apiKey: string; webhookSecret: string };
}

/**
 * The most common setup of a suite, said once: registers a beforeAll that starts a test service
 * (`overrides`, `options` as startTestService takes them) and, when `credits` is given, signs up one
 * account with that balance; and an afterAll that closes it. Read the fields inside hooks and tests.
 */
export function serviceForSuite(
  credits?: number,
  overrides: Partial<Config> = {},
  options: TestServiceOptions = {},
): SuiteService {
  const suite = {} as SuiteService;
  beforeAll(async () => {
    suite.t = await startTestService(overrides, options);
    if (credits !== undefined) suite.account = await suite.t.account(credits);
  });
  afterAll(async () => {
    await suite.t?.close();
  });
  return suite;
}

/** A suite's two simulator services: `t` fails the tasks whose prompt has the marker; `slow` finishes none during a test. */
export interface FailingAndSlow {
  t: TestService;
  slow: TestService;
}

/**
 * For suites that watch tasks end and tasks stay: registers a beforeAll that starts, side by side,
 * a service whose simulator fails every prompt containing `failMarker` and one whose simulator
 * takes ten minutes (so a task's hold and state can be observed before it ends); and an afterAll
 * that closes both. Read the fields inside hooks and tests.
 */
export function failingAndSlowServicesForSuite(failMarker: string): FailingAndSlow {
  const suite = {} as FailingAndSlow;
  beforeAll(async () => {
    [suite.t, suite.slow] = await Promise.all([
      startTestService({ simulatorFailWhenPromptContains: failMarker }),
      startTestService({ simulatorLatencyMs: 600_000 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([suite.t?.close(), suite.slow?.close()]);
  });
  return suite;
}
