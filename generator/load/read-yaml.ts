import { readFileSync } from 'node:fs';
import { load, YAMLException } from 'js-yaml';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { patternProblems } from './patterns.js';
import type { SpecProblem } from './spec-error.js';

/** A parsed YAML file that can say where any path inside it was written. */
export interface YamlSource {
  /** Path relative to the project root, used in messages and headers. */
  file: string;
  data: unknown;
  locate(path: readonly (string | number)[]): { line: number; col: number };
  problem(path: readonly (string | number)[], message: string): SpecProblem;
}

/**
 * Parses with js-yaml (fast); positions come from the `yaml` package's LineCounter, parsed only
 * when a problem has to be located, so a clean run never pays for them.
 */
export function parseYaml(file: string, text: string): { source?: YamlSource; problems: SpecProblem[] } {
  let data: unknown;
  try {
    data = load(text, { filename: file });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    return { problems: [{ file, line: error.mark.line + 1, col: error.mark.column + 1, message: error.reason }] };
  }
  let positions: { doc: Document; lineCounter: LineCounter } | undefined;
  const locate = (path: readonly (string | number)[]) => {
    if (!positions) {
      const lineCounter = new LineCounter();
      positions = { doc: parseDocument(text, { lineCounter }), lineCounter };
    }
    const pos = positions.lineCounter.linePos(offsetOf(positions.doc, path));
    return { line: pos.line, col: pos.col };
  };
  const source: YamlSource = {
    file,
    data,
    locate,
    problem: (path, message) => ({ file, ...locate(path), message }),
  };
  return { source, problems: [] };
}

/**
 * Reads one spec file (YAML, or JSON, which is YAML too). Every regular expression in it is checked
 * here, so that none of any spec file the generator reads can backtrack super-linearly (patterns.ts).
 */
export function readYaml(root: string, file: string): { source?: YamlSource; problems: SpecProblem[] } {
  const parsed = parseYaml(file, readFileSync(`${root}/${file}`, 'utf8'));
  if (!parsed.source) return parsed;
  return { source: parsed.source, problems: [...parsed.problems, ...patternProblems(parsed.source)] };
}

/** Offset of the deepest node along `path` that exists (the key for map entries, so messages point at the name). */
function offsetOf(doc: Document, path: readonly (string | number)[]): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: number[] } | null)?.range?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => String((item.key as { value?: unknown })?.value ?? item.key) === String(segment),
      );
      if (!pair) break;
      offset = (pair.key as { range?: number[] })?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as { range?: number[] } | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}
