import { defineConfig } from 'vitest/config';

/**
 * Every suite runs on SQLite. Where MEDIAFORGE_TEST_PG names a PostgreSQL server, the suites that
 * talk to a database run a second time on it (one suite, parameterized by MEDIAFORGE_TEST_DB).
 */
const pg = process.env.MEDIAFORGE_TEST_PG;
/** The reliability suites built on startTestService (races.test.ts skips its SQLite-only cross-process part itself). */
const RELIABILITY_DATABASE_SUITES = ['crash', 'deadlines', 'fuzz', 'hostile', 'hostile-assets', 'ledger-model', 'races', 'receivers', 'ssrf'].map((name) => `test/reliability/${name}.test.ts`);
const DATABASE_SUITES = ['test/http/**/*.test.ts', 'test/webhooks/**/*.test.ts', 'test/compat/**/*.test.ts', 'test/files/**/*.test.ts', 'test/ops/**/*.test.ts', 'test/scale/**/*.test.ts', ...RELIABILITY_DATABASE_SUITES];
/** Long runs (`npm run test:long`, vitest.long.config.ts) are never part of `npm test`. */
const LONG = 'test/**/*.long.test.ts';
if (!pg) console.log('PostgreSQL suites skipped: set MEDIAFORGE_TEST_PG=postgres://... to run them (.ci/run does).');

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: ['test/scale/**', LONG] } },
      ...(pg
        ? [{ extends: true, test: { name: 'postgres', include: DATABASE_SUITES, exclude: [LONG], env: { MEDIAFORGE_TEST_DB: 'postgres' } } }]
        : []),
    ],
  },
});
