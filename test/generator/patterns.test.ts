import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { ROOT } from '../support/root.js';
import { copySpec, loadError, runGeneratorCheck } from '../support/spec-copy.js';

/**
 * The generator refuses any regular expression in spec/ that can backtrack super-linearly (issue 16
 * item 1): recheck judges each pattern, and the problem names the file, line and column where the
 * pattern is written.
 */

/** The URL pattern spec/shared/formats.yaml had before issue 16: its two repeats overlap (quadratic on a failing URL). */
const OLD_URL = String.raw`^https://[^\s/?#]+[^\s]*$`;
/** The same, as a double-quoted YAML (and JSON) string. */
const OLD_URL_YAML = JSON.stringify(OLD_URL);
const FAMILY_D = 'spec/models/vendor_d/family_d/reference-to-video.yaml';

interface Edit {
  file: string;
  /** The text written in place of `from`; the problem must point at the first occurrence of `at` in the edited file. */
  from: string;
  to: string;
  at: string;
  want: RegExp;
}
type Change = Omit<Edit, 'want'>;

const BACKTRACKING: [string, Edit][] = [
  [
    'the old URL pattern in formats.yaml (https-url)',
    {
      file: 'spec/shared/formats.yaml',
      from: String.raw`pattern: "^https://[^\\s/?#]+(?:[/?#][^\\s]*)?$"`,
      to: `pattern: ${OLD_URL_YAML}`,
      at: `pattern: ${OLD_URL_YAML}`,
      want: /can backtrack \(2nd degree polynomial\), e\.g\. attack string 'https:\/\/.+' \+ '.+'\.repeat\(\d+\) \+ '.+'/,
    },
  ],
  [
    'the old URL pattern in formats.yaml (reference-url, with its service:// branch)',
    {
      file: 'spec/shared/formats.yaml',
      from: String.raw`"^(https://[^\\s/?#]+(?:[/?#][^\\s]*)?|service://a/`,
      to: String.raw`"^(https://[^\\s/?#]+[^\\s]*|service://a/`,
      at: String.raw`pattern: "^(https://[^\\s/?#]+[^\\s]*|`,
      want: /can backtrack \(2nd degree polynomial\)/,
    },
  ],
  [
    'the old URL pattern on an item property in fields.yaml (elements[].name)',
    {
      file: 'spec/shared/fields.yaml',
      from: 'name: { type: string, pattern: "^[A-Za-z][A-Za-z0-9_]{0,31}$" }',
      to: `name: { type: string, pattern: ${OLD_URL_YAML} }`,
      at: `pattern: ${OLD_URL_YAML}`,
      want: /can backtrack \(2nd degree polynomial\)/,
    },
  ],
  [
    'the old URL pattern on a field of a model file',
    {
      file: FAMILY_D,
      from: '  prompt: { required: true }',
      to: `  prompt: { required: true, pattern: ${OLD_URL_YAML} }`,
      at: `pattern: ${OLD_URL_YAML}`,
      want: /can backtrack \(2nd degree polynomial\)/,
    },
  ],
  [
    'a prompt marker regex in markers.yaml (flags g)',
    {
      file: 'spec/shared/markers.yaml',
      from: String.raw`- { regex: "<<<image_(\\d+)>>>", kind: image }`,
      to: String.raw`- { regex: "<<<image_(\\d+\\d*)!", kind: image }`,
      at: 'regex: "<<<image_',
      want: /can backtrack \(2nd degree polynomial\)/,
    },
  ],
  [
    'a pattern of the OpenAPI base document',
    {
      file: 'spec/openapi.yaml',
      from: String.raw`pattern: '^(0|[1-9]\d{0,12})(\.\d{1,2})?$'`,
      to: String.raw`pattern: '^\d+\d*x$'`,
      at: String.raw`pattern: '^\d+\d*x$'`,
      want: /can backtrack \(2nd degree polynomial\)/,
    },
  ],
  [
    'a pattern of spec/model.schema.json (exponential)',
    {
      file: 'spec/model.schema.json',
      from: String.raw`"pattern": "^(0|[1-9][0-9]*)(\\.[0-9]{1,2})?$"`,
      to: String.raw`"pattern": "^([0-9]+)+$"`,
      at: String.raw`"pattern": "^([0-9]+)+$"`,
      want: /can backtrack \(exponential\)/,
    },
  ],
  [
    'an invalid regular expression',
    {
      file: 'spec/shared/markers.yaml',
      from: String.raw`- { regex: "<<<image_(\\d+)>>>", kind: image }`,
      to: String.raw`- { regex: "<<<image_(\\d+>>>", kind: image }`,
      at: 'regex: "<<<image_',
      want: /invalid regular expression: .*Unterminated group/,
    },
  ],
];

/** 1-based line and column of the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; col: number } {
  const index = text.indexOf(needle);
  if (index < 0) throw new Error(`${needle} is not in the edited file`);
  const before = text.slice(0, index).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 };
}

function edit(root: string, e: Change): { line: number; col: number } {
  const path = join(root, e.file);
  const text = readFileSync(path, 'utf8');
  if (!text.includes(e.from)) throw new Error(`${e.from} is not in ${e.file}`);
  const edited = text.replace(e.from, () => e.to); // a function: `$` in the new text is literal
  writeFileSync(path, edited);
  return positionOf(edited, e.at);
}

describe('a pattern that can backtrack fails generation at file:line:col', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());

  it.each(BACKTRACKING)('%s', (_name, e) => {
    copy = copySpec();
    const { line, col } = edit(copy.root, e);
    const problem = loadError(copy.root).problems.find((p) => p.file === e.file && p.line === line && p.col === col);
    expect(problem, `no problem at ${e.file}:${line}:${col}`).toBeDefined();
    expect(problem!.message).toMatch(e.want);
  });

  it('a safe rewrite of the same pattern generates', () => {
    copy = copySpec();
    edit(copy.root, {
      file: 'spec/shared/formats.yaml',
      from: String.raw`pattern: "^https://[^\\s/?#]+(?:[/?#][^\\s]*)?$"`,
      to: String.raw`pattern: "^https://[^\\s/?#]+(?:/[^\\s]*)?$"`,
      at: 'pattern',
    });
    expect(loadCatalogue(copy.root).models.length).toBe(loadCatalogue(ROOT).models.length);
  });

  it('the CLI prints file:line:col and the attack string, and exits 1', () => {
    copy = copySpec();
    const { line, col } = edit(copy.root, BACKTRACKING[0][1]);
    const { status, stderr } = runGeneratorCheck(copy.root);
    expect(status).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(
      lines[0].startsWith(
        `spec/shared/formats.yaml:${line}:${col}: pattern ${OLD_URL_YAML} can backtrack (2nd degree polynomial), e.g. attack string 'https://`,
      ),
      lines[0],
    ).toBe(true);
  }, 90_000); // a fresh tsx process and recheck's agent: 12 to 33 s on the shared 2-core machine
});

describe('recheck stays a generation-time tool', () => {
  it('nothing under runtime/ or generated/ imports it', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : /\.(ts|js)$/.test(name) ? [path] : [];
      });
    const importers = [...files(join(ROOT, 'runtime')), ...files(join(ROOT, 'generated'))].filter((f) =>
      /['"]recheck['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(importers).toEqual([]);
  });
});

/** Every string schema inside a JSON Schema, with its path (items as []). */
function strings(schema: Record<string, any>, path: string): [string, Record<string, any>][] {
  if (schema.type === 'string') return [[path, schema]];
  if (schema.type === 'array' && schema.items) return strings(schema.items, `${path}[]`);
  if (schema.type === 'object' && schema.properties)
    return Object.entries(schema.properties).flatMap(([name, sub]) =>
      strings(sub as Record<string, any>, path ? `${path}.${name}` : name),
    );
  return [];
}

describe('every string a model accepts has a bounded length (issue 16: maxLength on every URL and free string)', () => {
  /** A pattern with no unbounded repeat (*, +, {n,}) bounds the length of what it accepts (elements[].name). */
  const boundedByPattern = (pattern: unknown) => typeof pattern === 'string' && !/[*+]|\{\d+,\}/.test(pattern);
  it.each([...catalogue.values()].map((m) => [m.info.id, m.info.inputSchema] as const))('%s', (_id, schema) => {
    const unbounded = strings(schema, '').filter(
      ([, s]) => s.enum === undefined && s.maxLength === undefined && !boundedByPattern(s.pattern),
    );
    expect(unbounded.map(([path]) => path)).toEqual([]);
    for (const [path, s] of strings(schema, ''))
      if (s.pattern !== undefined && /https:/.test(s.pattern)) expect(s.maxLength, path).toBeLessThanOrEqual(2048);
  });
});
