#!/usr/bin/env node
// npm 11's `npm ci` wants a lockfile entry for every package in an optional-dependency map, but
// the registry this project installs from serves only the Linux builds of some native packages
// (rollup's @rollup/rollup-<platform>), so `npm install` cannot record the others and `npm ci`
// then fails as "out of sync" (npm/cli#4828). This adds the missing entries with the platform
// fields read from the package name: `npm ci` skips them on any other platform and never fetches
// them. Run it after `npm install` changes the lockfile: node scripts/complete-optional-lock.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const CPUS = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x'];

/** os, cpu and libc of a platform package name such as @rollup/rollup-linux-arm-musleabihf. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-').slice(1);
  const [os, cpu, abi] = parts;
  if (!CPUS.includes(cpu)) return undefined;
  const libc = os === 'linux' ? (abi?.startsWith('musl') ? ['musl'] : ['glibc']) : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[`${path}/${key}`]) continue;
    const platform = platformOf(name);
    if (!platform) continue;
    lock.packages[key] = { version, ...platform, optional: true };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
