import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { extraCaCertificates } from './support/loopback-tls.js';
import { browserRequired, findSystemBrowser } from './test/support/system-browser.js';

/**
 * Every suite runs on SQLite. Where MEDIAFORGE_TEST_PG names a PostgreSQL server, the suites that
 * talk to a database run a second time on it (one suite, parameterized by MEDIAFORGE_TEST_DB).
 */
const pg = process.env.MEDIAFORGE_TEST_PG;
/**
 * The loopback https listeners' fixture certificate, trusted the standard way in every test process
 * and every service they spawn (they inherit this environment): Node reads NODE_EXTRA_CA_CERTS only
 * at start-up, so it is set here, before vitest starts its forks (the config is read more than once:
 * a value this made already is kept as it is).
 */
process.env.NODE_EXTRA_CA_CERTS = extraCaCertificates();
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
  'resolve-together',
  'receivers',
  'ssrf',
].map((name) => `test/reliability/${name}.test.ts`);
/**
 * `MEDIAFORGE_TEST_FULL=1`: every suite on every engine and store it can run on. Without it,
 * `npm test` leaves out of the PostgreSQL projects the suites whose subject does not depend on the
 * engine and whose database path another suite already runs there, which keeps CI under its 30
 * minutes (such a suite costs 15-35 s per engine).
 */
const full = !!process.env.MEDIAFORGE_TEST_FULL;
/**
 * Left out of the postgres project without MEDIAFORGE_TEST_FULL: five of the six provider profile
 * suites (each maps one vendor's API; the work items, holds and health rows they write are the
 * same for every profile, and runway.test.ts runs that path on PostgreSQL for the six, as it does
 * on the S3 store), and the maintainer's path of a profile added as YAML (what it shows is the
 * generator and the profile vocabulary; the service it starts runs a profile's path, which
 * runway.test.ts runs there; reconciliation on PostgreSQL: test/deployments/reconcile.test.ts).
 * Also (2026-11-27, when a clean-clone CI run took 29 min 23 s): secret-echo.test.ts (what it shows
 * is the redaction of an echoed key in answers, logs, status and metrics; the health rows and task
 * errors it writes are written on PostgreSQL by status-reading, failover and poll-health),
 * replicate.test.ts (one protocol's mapping; upstream webhooks that wake a poll, and a restart
 * mid-poll, run on PostgreSQL in lifecycle.test.ts and crash.test.ts), fal-queue.test.ts, which
 * the s3-postgres project runs on PostgreSQL already, and downloads.test.ts (result downloads are
 * streams between the upstream and the store; a lease taken over and a lane's shares run on
 * PostgreSQL in crash.test.ts and fairness.test.ts).
 */
const POSTGRES_LEFT_OUT = full
  ? []
  : [
      'test/deployments/vendors/ark.test.ts',
      'test/deployments/vendors/dashscope.test.ts',
      'test/deployments/vendors/kling.test.ts',
      'test/deployments/vendors/luma.test.ts',
      'test/deployments/vendors/minimax.test.ts',
      'test/deployments/profile-maintainer.test.ts',
      'test/deployments/profile-pieces.test.ts',
      'test/deployments/secret-echo.test.ts',
      'test/deployments/replicate.test.ts',
      'test/deployments/fal-queue.test.ts',
      'test/deployments/downloads.test.ts',
    ];
const DATABASE_SUITES = [
  'test/http/**/*.test.ts',
  'test/deployments/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/compat/**/*.test.ts',
  'test/files/**/*.test.ts',
  'test/ops/**/*.test.ts',
  'test/scale/**/*.test.ts',
  'test/payments/**/*.test.ts',
  'test/composition/two-services.test.ts',
  // The operator console's queries (searches, joins, the audit log) on both engines (issue 28).
  'test/console/operator*.test.ts',
  ...RELIABILITY_DATABASE_SUITES,
];
/**
 * The suites that run a third time with media in an S3-compatible store (issue 29): the files,
 * assets, compat and upstream suites that go through the public surface without naming a store:
 * the library (uploaded through the store's presigned PUT), the playground's uploads (through the
 * service, streamed to the store), imports, references, the compatible layer's uploads and
 * downloads, and upstream results of the jobs, fal, Replicate and Runway protocols streamed into
 * the store. test/support/s3-global-setup.ts starts s3rver for them; startTestService and
 * startMediaforge put each service's media there. Left out: suites that read a store's own folders
 * or rows or name their stores (uploads.test.ts and reservations.test.ts test the service's own
 * PUT, which the S3 store replaces with the store's: s3-uploads.test.ts; downloads.test.ts,
 * lifecycle.test.ts, outputs.test.ts, streaming.test.ts, media-ranges.test.ts,
 * upload-lifetime.test.ts), and routing.test.ts (weights, nothing of the store).
 */
const S3_SUITES = [
  'test/files/library.test.ts',
  'test/files/import.test.ts',
  'test/files/acceptance.test.ts',
  'test/files/length-limits.test.ts',
  'test/files/reference-measure.test.ts',
  'test/files/reference-stream.test.ts',
  'test/console/playground-uploads.test.ts',
  'test/compat/openai-sdk.test.ts',
  'test/compat/form-bounds.test.ts',
  'test/compat/progress.test.ts',
  'test/compat/readme-openai.test.ts',
  'test/deployments/non-video-result.test.ts',
  'test/deployments/fal-queue.test.ts',
  'test/deployments/replicate.test.ts',
  'test/deployments/billed-clips.test.ts',
  'test/deployments/simulator-output.test.ts',
  'test/deployments/failover.test.ts',
  'test/deployments/poll-outcomes.test.ts',
  // One profile adapter's result download stands for the six (test/deployments/vendors/: the same store path, 30 s each).
  'test/deployments/vendors/runway.test.ts',
];
/** Long runs (`npm run test:long`, vitest.long.config.ts) are never part of `npm test`. */
const LONG = 'test/**/*.long.test.ts';
/**
 * On PostgreSQL too: in `npm test`, a representative few of those the postgres project runs
 * (uploads, imports, the compatible layer, upstream results), which keeps CI under its 30 minutes;
 * MEDIAFORGE_TEST_FULL=1 runs every S3 suite the postgres project also runs (all but the playground's).
 */
const S3_POSTGRES_SUITES = full
  ? S3_SUITES.filter((suite) => !suite.startsWith('test/console/'))
  : [
      'test/files/library.test.ts',
      'test/files/import.test.ts',
      'test/compat/openai-sdk.test.ts',
      'test/deployments/non-video-result.test.ts',
      'test/deployments/fal-queue.test.ts',
    ];
/**
 * The S3 project in `npm test` (CI's 30 minutes): upstream results streamed into the store by the
 * Runway profile, fal (s3-postgres) and the failover and billed-clip suites stand for the
 * Replicate, simulator and poll-outcome suites; MEDIAFORGE_TEST_FULL=1 runs them all.
 */
const S3_SQLITE_SUITES = full
  ? S3_SUITES
  : S3_SUITES.filter(
      (suite) =>
        ![
          'test/deployments/fal-queue.test.ts',
          'test/deployments/replicate.test.ts',
          'test/deployments/simulator-output.test.ts',
          'test/deployments/poll-outcomes.test.ts',
        ].includes(suite),
    );
const S3_SETUP = { globalSetup: ['./test/support/s3-global-setup.ts'], exclude: [LONG] };
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
                exclude: [LONG, ...POSTGRES_LEFT_OUT],
                env: { MEDIAFORGE_TEST_DB: 'postgres' },
              },
            },
          ]
        : []),
      { extends: true, test: { name: 's3', ...S3_SETUP, include: S3_SQLITE_SUITES } },
      ...(pg
        ? [
            {
              extends: true,
              test: {
                name: 's3-postgres',
                ...S3_SETUP,
                include: S3_POSTGRES_SUITES,
                env: { MEDIAFORGE_TEST_DB: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
