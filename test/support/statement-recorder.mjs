/**
 * The statement record's recorder (docs/architecture.md, "Where is the test for this file?"):
 * loaded with `node --import` into every process of a recorded run (vitest.config.ts puts it in
 * NODE_OPTIONS when MEDIAFORGE_STATEMENT_RECORD names a directory, so the forks and every service
 * they spawn load it; without that variable nothing loads it and nothing is recorded). It wraps the
 * two drivers where every statement passes, Kysely's compiled ones and the named prepared ones
 * alike: better-sqlite3's prepare, exec and pragma, and node-postgres' Client#query. Each distinct
 * statement is appended once per process to DIR/<pid>.jsonl with its engine, the runtime files on
 * its stack (test/support/statement-check.ts pairs engine-specific files by name) and the suite
 * that ran it (MEDIAFORGE_STATEMENT_SUITE, set per file by test/support/leak-check.ts).
 * Plain JavaScript: it runs before any TypeScript loader.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const directory = process.env.MEDIAFORGE_STATEMENT_RECORD;
if (directory) install(directory);

/** The statement without its parameters: placeholders ($1, ?) as ?, whitespace collapsed. */
export function normalizedStatement(text) {
  return String(text).replace(/\$\d+/g, '?').replace(/\s+/g, ' ').trim();
}

/**
 * The repository's files on a stack, innermost first, each with the line it was at (its first
 * frame): runtime/ and generated/ (a build's dist/runtime/*.js as its source), and test/ and
 * support/, so the check can tell a statement a test issued through the runtime's dialect from one
 * the runtime issued itself (test/support/statement-check.ts, issuer).
 */
export function stackSites(stack) {
  const sites = [];
  for (const match of String(stack).matchAll(
    /(?:file:\/\/)?\/[^\s():]*?\/((?:dist\/)?(?:runtime|generated|test|support)\/[^\s():]+?\.(?:ts|js|mjs)):(\d+)/g,
  )) {
    if (match[1].includes('node_modules/')) continue;
    const file = match[1].replace(/^dist\//, '').replace(/\.m?js$/, '.ts');
    // This file's own frames are not a caller.
    if (file === 'test/support/statement-recorder.ts') continue;
    if (!sites.some((site) => site.file === file)) sites.push({ file, line: Number(match[2]) });
  }
  return sites;
}

/**
 * The stack as `file:line` lines read from V8's call sites, not formatted. Every statement asks for
 * its stack, and a formatted one goes through the source maps a process applies: in vitest's forks
 * that cost ~0.4 ms of CPU per statement, 10 to 24 % of a database suite's CPU, against ~0.03 ms for
 * the call sites. The files are the same either way (a module's source map names its own file);
 * the lines are the running code's, which is why a new record takes its lines from formattedStack.
 */
function callSiteStack() {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = 60;
  Error.prepareStackTrace = (_error, callSites) => callSites;
  const holder = {};
  Error.captureStackTrace(holder, callSiteStack);
  const callSites = holder.stack;
  Error.prepareStackTrace = prepare;
  Error.stackTraceLimit = limit;
  return callSites.map((site) => `${site.getFileName() ?? ''}:${site.getLineNumber() ?? 0}`).join('\n');
}

/** The stack as the process formats it (through its source maps, where it applies them). */
function formattedStack() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 60;
  const stack = new Error().stack;
  Error.stackTraceLimit = limit;
  return stack;
}

function install(dir) {
  const require = createRequire(import.meta.url);
  const seen = new Set();
  const file = join(dir, `${process.pid}.jsonl`);
  const record = (engine, text) => {
    const statement = normalizedStatement(text);
    // Once per statement and path of files: the same text from a test and from the runtime are two records.
    const path = stackSites(callSiteStack()).map((site) => site.file);
    const key = `${engine}\0${statement}\0${path.join(' ')}`;
    if (seen.has(key)) return;
    seen.add(key);
    // A new record: its lines as the process reports them (through its source maps), once per key.
    const sites = stackSites(formattedStack());
    const files = sites.map((site) => site.file);
    const line = {
      kind: 'sql',
      engine,
      statement,
      files,
      lines: sites.map((site) => site.line),
      suite: process.env.MEDIAFORGE_STATEMENT_SUITE,
      project: process.env.MEDIAFORGE_STATEMENT_PROJECT,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  // Each driver is wrapped when the process loads it, not before: loading pg in every process of a
  // run (the CLI's and the SQLite services' too, and every node the suites start) cost ~80 ms of
  // CPU each. Both are CommonJS, so an ESM import of them goes through Module._load as a require does.
  const drivers = [
    ['better-sqlite3', wrapBetterSqlite3],
    ['pg', wrapPg],
  ].flatMap(([name, wrap]) => {
    try {
      return [{ path: require.resolve(name), wrap }];
    } catch {
      return []; // not installed where this process runs: nothing of it to record
    }
  });
  const Module = require('node:module');
  const load = Module._load;
  Module._load = function (...args) {
    const exports = load.apply(this, args);
    for (let i = drivers.length - 1; i >= 0; i--) {
      const loaded = Module._cache[drivers[i].path];
      // `loaded` turns true when the driver's own load returns (its dependencies load before it).
      if (!loaded?.loaded) continue;
      drivers[i].wrap(loaded.exports, record);
      drivers.splice(i, 1);
    }
    if (drivers.length === 0) Module._load = load;
    return exports;
  };
}

/** better-sqlite3's prepare, exec and pragma. */
function wrapBetterSqlite3(Database, record) {
  for (const method of ['prepare', 'exec']) {
    const original = Database.prototype[method];
    Database.prototype[method] = function (source, ...rest) {
      record('sqlite', source);
      return original.call(this, source, ...rest);
    };
  }
  const pragma = Database.prototype.pragma;
  Database.prototype.pragma = function (source, ...rest) {
    record('sqlite', `PRAGMA ${source}`);
    return pragma.call(this, source, ...rest);
  };
}

/** node-postgres' Pool#query and Client#query. */
function wrapPg({ Client, Pool }, record) {
  // The pool's query first: it hands the statement to a client in a callback, where the stack no
  // longer names the runtime file that sent it (the client's query then finds it recorded).
  const poolQuery = Pool.prototype.query;
  Pool.prototype.query = function (config, ...rest) {
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text === 'string') record('postgres', text);
    return poolQuery.call(this, config, ...rest);
  };
  const query = Client.prototype.query;
  Client.prototype.query = function (config, ...rest) {
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text === 'string') record('postgres', text);
    return query.call(this, config, ...rest);
  };
}
