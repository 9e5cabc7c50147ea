import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkSync, type Diagnostics } from 'recheck';
import type { YamlSource } from './read-yaml.js';
import type { SpecProblem } from './spec-error.js';

/** A regular expression written in a spec file: where, its source, and the flags the generated code compiles it with. */
export interface SpecPattern {
  path: (string | number)[];
  source: string;
  flags: string;
}

/**
 * Every regular expression in a spec file's data: the string value of any `pattern` key (JSON
 * Schema; ajv compiles it with the `u` flag) and of any `regex` key (prompt markers, compiled with
 * `g`, and `i` where `ignoreCase` is set).
 */
export function patternsIn(data: unknown, path: (string | number)[] = []): SpecPattern[] {
  if (Array.isArray(data)) return data.flatMap((item, i) => patternsIn(item, [...path, i]));
  if (typeof data !== 'object' || data === null) return [];
  const node = data as Record<string, unknown>;
  const out: SpecPattern[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' && typeof value === 'string') out.push({ path: [...path, key], source: value, flags: 'u' });
    else if (key === 'regex' && typeof value === 'string')
      out.push({ path: [...path, key], source: value, flags: node.ignoreCase === true ? 'gi' : 'g' });
    else out.push(...patternsIn(value, [...path, key]));
  }
  return out;
}

/** What is wrong with one pattern, or undefined; by flags and source, since the few distinct patterns recur in every load. */
const verdicts = new Map<string, string | undefined>();

/**
 * Why a pattern is refused: not a valid regular expression, or `recheck` finds that it can
 * backtrack super-linearly (polynomial or exponential time in the length of a failing input), or
 * recheck cannot decide (`unknown`: a timeout or an unsupported construct). An undecided pattern
 * is refused too: the point is that no pattern reaches the runtime without a proof of linear time,
 * and a pattern recheck cannot judge can nearly always be written more simply.
 */
export function patternProblem(source: string, flags: string): string | undefined {
  const key = `${flags}/${source}`;
  if (verdicts.has(key)) return verdicts.get(key);
  if (safeOnDisk().has(key)) return undefined;
  const verdict = judge(source, flags);
  verdicts.set(key, verdict);
  if (verdict === undefined) rememberSafe(key);
  return verdict;
}

/**
 * Patterns recheck found safe in an earlier run, kept in the user's cache directory per recheck
 * version (a check costs 10 ms to 2 s, so a generation would otherwise pay about a second for the
 * same few dozen patterns every time). Only safe verdicts are kept: a refused pattern is checked
 * again each run. The cache is an optimisation only; any error reading or writing it is ignored.
 */
const CACHE_FILE = join(
  process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
  'mediaforge',
  `recheck-${recheckVersion()}-safe.json`,
);
let safe: Set<string> | undefined;

function safeOnDisk(): Set<string> {
  if (!safe) {
    try {
      safe = new Set(JSON.parse(readFileSync(CACHE_FILE, 'utf8')) as string[]);
    } catch {
      safe = new Set();
    }
  }
  return safe;
}

function rememberSafe(key: string): void {
  const known = safeOnDisk();
  known.add(key);
  try {
    mkdirSync(dirname(CACHE_FILE), { recursive: true });
    const temp = `${CACHE_FILE}.${process.pid}`;
    writeFileSync(temp, JSON.stringify([...known].sort()));
    renameSync(temp, CACHE_FILE); // whole or not at all, with parallel generations
  } catch {
    // no cache: the next run checks again
  }
}

function recheckVersion(): string {
  try {
    return (createRequire(import.meta.url)('recheck/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function judge(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, flags);
  } catch (e) {
    return `invalid regular expression: ${(e as Error).message}`;
  }
  const d: Diagnostics = checkSync(source, flags);
  const shown = JSON.stringify(source);
  switch (d.status) {
    case 'safe':
      return undefined;
    case 'vulnerable': {
      const complexity =
        d.complexity.type === 'exponential' ? 'exponential' : d.complexity.summary.replace(/ \(fuzz\)$/, '');
      return `pattern ${shown} can backtrack (${complexity}), e.g. attack string ${d.attack.pattern}; write it so that no two neighbouring repeats can match the same characters`;
    }
    case 'unknown': {
      const detail = 'message' in d.error ? `${d.error.kind}: ${d.error.message}` : d.error.kind;
      return `pattern ${shown} could not be shown free of backtracking by recheck (${detail}); simplify it`;
    }
  }
}

/** The problems of every pattern in a parsed spec file, each at the place it is written. */
export function patternProblems(source: YamlSource): SpecProblem[] {
  const out: SpecProblem[] = [];
  for (const pattern of patternsIn(source.data)) {
    const problem = patternProblem(pattern.source, pattern.flags);
    if (problem) out.push(source.problem(pattern.path, problem));
  }
  return out;
}
