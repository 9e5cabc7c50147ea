import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { browserRequired, findSystemBrowser } from './test/support/system-browser.js';

/**
 * Every suite runs on SQLite. Where MEDIAFORGE_TEST_PG names a PostgreSQL server, the suites that
 * talk to a database run a second time on it (one suite, parameterized by MEDIAFORGE_TEST_DB).
 */
const pg = process.env.MEDIAFORGE_TEST_PG;
/** The reliability suites built on startTestService (races.test.ts skips its SQLite-only cross-process part itself). */
const RELIABILITY_DATABASE_SUITES = [
  'crash',
  'deadlines',
  'fairness',
  'fuzz',
  'hostile',
  'hostile-assets',
  'hostile-input',
  'hostile-urls',
  'ledger-model',
  'provider-reason',
  'races',
  'receivers',
  'ssrf',
].map((name) => `test/reliability/${name}.test.ts`);
const DATABASE_SUITES = [
  'test/http/**/*.test.ts',
  'test/deployments/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/compat/**/*.test.ts',
  'test/files/**/*.test.ts',
  'test/ops/**/*.test.ts',
  'test/scale/**/*.test.ts',
  'test/composition/two-services.test.ts',
  // The operator console's queries (searches, joins, the audit log) on both engines (issue 28).
  'test/console/operator*.test.ts',
  ...RELIABILITY_DATABASE_SUITES,
];
/**
 * The suites that run a third time with media in an S3-compatible store (issue 29): the library
 * (uploaded through the store's presigned PUT), imports, the compatible layer's uploads and
 * downloads, and upstream results streamed into the store; chosen to cover every path that writes or reads media
 * without running everything again. test/support/s3-global-setup.ts starts s3rver for them.
 * test/files/uploads.test.ts is not among them: it tests the service's own PUT, which the S3 store
 * replaces with the store's (test/files/s3-uploads.test.ts); test/deployments/downloads.test.ts
 * reads the local store's folders; media-ranges.test.ts and upload-lifetime.test.ts name their
 * stores.
 */
const S3_SUITES = [
  'test/files/library.test.ts',
  'test/files/import.test.ts',
  'test/compat/openai-sdk.test.ts',
  'test/deployments/non-video-result.test.ts',
  'test/console/playground-uploads.test.ts',
];
/** Long runs (`npm run test:long`, vitest.long.config.ts) are never part of `npm test`. */
const LONG = 'test/**/*.long.test.ts';
const S3_PROJECT = { globalSetup: ['./test/support/s3-global-setup.ts'], include: S3_SUITES, exclude: [LONG] };
if (!pg) console.log('PostgreSQL suites skipped: set MEDIAFORGE_TEST_PG=postgres://... to run them (.ci/run does).');
/** The browser suites need a system Chromium; without one they are left out, except under CI, where they must run (test/support/system-browser.ts). */
const BROWSER_SUITES = 'test/**/*.browser.test.ts';
const skipBrowser = !findSystemBrowser() && !browserRequired();
if (skipBrowser && !process.env.MEDIAFORGE_BROWSER_NOTICE) {
  process.env.MEDIAFORGE_BROWSER_NOTICE = 'shown'; // the config is read more than once per run: one line
  console.log(
    'BROWSER SUITES SKIPPED: no chromium, chromium-browser, google-chrome on PATH; install one (apt-get install -y chromium) to run test/**/*.browser.test.ts. CI=true runs them and fails without one.',
  );
}

export default defineConfig({
  // The client is its own package (client/, @mediaforge/client); the suites import its sources under
  // the package's names, as tsconfig.json's paths do for the type check. test/packaging/ tests the built package.
  resolve: {
    alias: [
      { find: /^@mediaforge\/client$/, replacement: fileURLToPath(new URL('./client/src/index.ts', import.meta.url)) },
      {
        find: /^@mediaforge\/client\/webhooks$/,
        replacement: fileURLToPath(new URL('./client/src/webhooks.ts', import.meta.url)),
      },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time (vitest's default on 2 cores is one): most suites wait on timers, child
    // processes and sockets rather than the CPU, so the second fork roughly halves the wall time.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/scale/**', LONG, ...(skipBrowser ? [BROWSER_SUITES] : [])],
        },
      },
      ...(pg
        ? [
            {
              extends: true,
              test: {
                name: 'postgres',
                include: DATABASE_SUITES,
                exclude: [LONG],
                env: { MEDIAFORGE_TEST_DB: 'postgres' },
              },
            },
          ]
        : []),
      { extends: true, test: { name: 's3', ...S3_PROJECT } },
      ...(pg
        ? [{ extends: true, test: { name: 's3-postgres', ...S3_PROJECT, env: { MEDIAFORGE_TEST_DB: 'postgres' } } }]
        : []),
    ],
  },
});
