import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { extraCaCertificates } from './support/loopback-tls.js';
import { SlowestFirstSequencer } from './test/support/slowest-first.js';
import { suiteKinds } from './test/support/suite-kinds.js';
import { browserRequired, findSystemBrowser } from './test/support/system-browser.js';

/**
 * Every suite runs on SQLite. Where MEDIAFORGE_TEST_PG names a PostgreSQL server, the suites that
 * talk to a database run a second time on it (one suite, parameterized by MEDIAFORGE_TEST_DB).
 */
const pg = process.env.MEDIAFORGE_TEST_PG;
/**
 * This run's name, in every fork (they inherit the environment; the config is read more than once
 * per run: a value set already is kept): the PostgreSQL projects keep the schemas their services
 * leave for other services of the same run, never of another (test/support/postgres-schemas.ts).
 */
process.env.MEDIAFORGE_TEST_RUN ??= `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
/** The PostgreSQL projects: this run's free schemas are dropped when it ends, and those a stopped run left when it starts. */
const PG_SCHEMAS = './test/support/postgres-schemas-setup.ts';
/**
 * The loopback https listeners' fixture certificate, trusted the standard way in every test process
 * and every service they spawn (they inherit this environment): Node reads NODE_EXTRA_CA_CERTS only
 * at start-up, so it is set here, before vitest starts its forks (the config is read more than once:
 * a value this made already is kept as it is).
 */
process.env.NODE_EXTRA_CA_CERTS = extraCaCertificates();
/**
 * No suite is listed by hand: what a suite is decides where it runs (test/support/suite-kinds.ts,
 * docs/architecture.md "Where is the test for this file?"). Every database suite (its imports reach
 * test/support/service.ts, which gives its services the project's engine) runs on SQLite and on
 * PostgreSQL; every store suite (`@store-suite` in its header) runs again with its media in an S3
 * store, on both engines. The statement record (MEDIAFORGE_STATEMENT_RECORD, .ci/run) fails the run
 * when a statement ran only on SQLite or a store path only on the local store.
 */
const kinds = suiteKinds(fileURLToPath(new URL('.', import.meta.url)));
/**
 * A recorded run (MEDIAFORGE_STATEMENT_RECORD=<dir>): every fork and every process it spawns (they
 * inherit this environment) loads the recorder first (test/support/statement-recorder.mjs); after
 * the projects, `.ci/run` checks the record (`npm run test:statements`).
 */
const recorder = `--import=${fileURLToPath(new URL('./test/support/statement-recorder.mjs', import.meta.url))}`;
if (process.env.MEDIAFORGE_STATEMENT_RECORD && !process.env.NODE_OPTIONS?.includes(recorder))
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${recorder}`.trim();
/** Long runs (`npm run test:long`, vitest.long.config.ts) are never part of `npm test`. */
const LONG = 'test/**/*.long.test.ts';
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
/** Left out of every project: the long runs, and the browser suites on a machine without a browser. */
const EXCLUDE = [LONG, ...(skipBrowser ? [BROWSER_SUITES] : [])];
/** Every project: one loopback reference host for the customer's files suites name (test/support/reference-url.ts). */
const REFERENCE_HOST = './test/support/reference-host-setup.ts';
/** The S3 projects: test/support/s3-global-setup.ts starts one s3rver; startTestService and startMediaforge put each service's media there. */
const S3_SETUP = {
  globalSetup: [REFERENCE_HOST, './test/support/s3-global-setup.ts'],
  include: kinds.store,
  exclude: EXCLUDE,
};

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
    // Four files at a time on this 2-core machine: most suites wait on timers, child processes and
    // sockets rather than the CPU (test/deployments on SQLite with two forks: 180 s, the machine 47 %
    // busy; three: 124 s; four: 107 s, 82 % busy; the whole run with four: 864 s, 91 % busy).
    // minWorkers is the same count: with vitest's default (one on 2 cores) tinypool stops forks it
    // finds idle beyond the minimum, and a run with four ended in "Terminating worker thread", three
    // files not run and its forks left running; with the minimum at four, none of 3 runs did.
    // MEDIAFORGE_TEST_FORKS sets another count (to measure one against another on a machine).
    maxWorkers: Number(process.env.MEDIAFORGE_TEST_FORKS ?? 4),
    minWorkers: Number(process.env.MEDIAFORGE_TEST_FORKS ?? 4),
    // No isolation: a fork runs file after file without re-importing the ~357 project modules and the
    // packages each file would load again (test/http on SQLite, A B B A under the same load: collect
    // 361 s and 267 s isolated, 37 s and 52 s without; wall 408 s, 297 s against 87 s, 153 s). What
    // could pass between files is checked instead: no module state in runtime/, test/ and support/
    // (test/composition/no-module-state.test.ts), and test/support/leak-check.ts after each file.
    isolate: false,
    // Each project starts its slowest files first, by the times of a whole run (test/file-times.json),
    // a clean clone too: vitest waits for every file of a project before it starts the next project,
    // so a long file started late leaves the other forks idle (test/support/slowest-first.ts).
    sequence: { sequencer: SlowestFirstSequencer },
    // Each file's time per project goes to test-times.json, and the 15 slowest are printed at the end.
    reporters: ['default', './test/support/timing-reporter.ts'],
    // After every file: it changed no environment and left no process running (a leak fails that file, not a neighbour).
    setupFiles: ['./test/support/leak-check.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          globalSetup: [REFERENCE_HOST],
          include: ['test/**/*.test.ts'],
          // test/scale/ is about several processes on one PostgreSQL database: the postgres project runs it.
          exclude: ['test/scale/**', ...EXCLUDE],
        },
      },
      ...(pg
        ? [
            {
              extends: true,
              test: {
                name: 'postgres',
                globalSetup: [REFERENCE_HOST, PG_SCHEMAS],
                include: kinds.database,
                exclude: EXCLUDE,
                env: { MEDIAFORGE_TEST_DB: 'postgres' },
              },
            },
          ]
        : []),
      { extends: true, test: { name: 's3', ...S3_SETUP } },
      ...(pg
        ? [
            {
              extends: true,
              test: {
                name: 's3-postgres',
                ...S3_SETUP,
                globalSetup: [...S3_SETUP.globalSetup, PG_SCHEMAS],
                env: { MEDIAFORGE_TEST_DB: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
