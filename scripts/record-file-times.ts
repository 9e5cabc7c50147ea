/**
 * `npx tsx scripts/record-file-times.ts`: the times of this checkout's last run
 * (test-times.json) into the committed ones (test/file-times.json), which order every run slowest
 * first (test/support/slowest-first.ts). The files the last run timed get its times; the others keep
 * theirs, so a run of one project or one folder updates only what it ran; a file that no longer
 * exists is dropped. Run it after a whole run (`.ci/run`'s environment) whose order has drifted.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_TIMES, LAST_RUN_TIMES, readTimes, slowestEntryFirst } from '../test/support/slowest-first.js';
import { ROOT } from '../test/support/root.js';

const last = readTimes(join(ROOT, LAST_RUN_TIMES));
if (Object.keys(last).length === 0) {
  console.error(`${LAST_RUN_TIMES} is missing or empty: run the suites first (npm test)`);
  process.exit(1);
}
const merged = { ...readTimes(join(ROOT, FILE_TIMES)), ...last };
const kept = Object.entries(merged)
  .filter(([key]) => existsSync(join(ROOT, key.slice(key.indexOf(':') + 1))))
  .sort(slowestEntryFirst);
writeFileSync(join(ROOT, FILE_TIMES), `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`);
console.log(`${FILE_TIMES}: ${kept.length} files (${Object.keys(last).length} from ${LAST_RUN_TIMES})`);
