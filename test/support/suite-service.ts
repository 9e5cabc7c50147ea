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
