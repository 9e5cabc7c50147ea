// Whether dist/ (npm run build) is current: the build records a fingerprint of its inputs (how many
// files, the newest modification time, and the packages the lockfile pins) in dist/build-info.json;
// the build is stale once an input is newer, added or removed, or a pinned package changes. Plain JavaScript with no dependency: bin/mediaforge.js and npm start read
// it before anything is compiled, in production installs too. A stat of each input takes a few ms.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
export const BUILD_INFO = join(DIST, 'build-info.json');

/** What the build reads: the service, its generated modules, the docs site and guides, the client, the build itself. */
const INPUTS = [
  'runtime',
  'generated',
  'catalogue-core',
  'docs-site',
  'docs',
  'client/src',
  'scripts/build.ts',
  'scripts/build-client.mjs',
];

/**
 * The lockfile counts by what it pins, not by its bytes or its modification time: `npm prune
 * --omit=dev` (how a production tree is made) rewrites package-lock.json, reordered, without
 * changing a single pinned package, and must not make the build look stale.
 */
function lockedPackages() {
  const lock = join(ROOT, 'package-lock.json');
  if (!existsSync(lock)) return 'none';
  const packages = JSON.parse(readFileSync(lock, 'utf8')).packages ?? {};
  const pinned = Object.entries(packages)
    .map(([path, entry]) => `${path}@${entry.version ?? ''}`)
    .sort()
    .join('\n');
  return createHash('sha256').update(pinned).digest('hex').slice(0, 16);
}

/** `files:newestMtimeMs:lockedPackages` over every input file. */
export function inputFingerprint() {
  let files = 0;
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
      return;
    }
    files++;
    newest = Math.max(newest, Math.floor(stat.mtimeMs));
  };
  for (const input of INPUTS) if (existsSync(join(ROOT, input))) visit(join(ROOT, input));
  return `${files}:${newest}:${lockedPackages()}`;
}

/** The fingerprint a build recorded in `record` (JSON with `inputs`: dist/build-info.json, client/.built-from); undefined when there is none. */
export function recordedInputs(record) {
  try {
    return JSON.parse(readFileSync(record, 'utf8')).inputs;
  } catch {
    return undefined;
  }
}

/** 'current', 'stale' (built from older inputs) or 'missing'. */
export function buildState() {
  if (!existsSync(BUILD_INFO)) return 'missing';
  return recordedInputs(BUILD_INFO) === inputFingerprint() ? 'current' : 'stale';
}
