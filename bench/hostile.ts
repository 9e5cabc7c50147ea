/**
 * Issue 16 item 1: the worst-case time to validate a 1 MiB body of hostile URLs through the
 * generated catalogue's validate (hostileBodyValidationMs, target < 50 ms).
 *
 * For every model with URL fields (a string whose pattern accepts https://, at any depth: items,
 * loras[].path, elements[].image_urls[]), 1 MiB of URLs that fail their format at the very end
 * (the shape that made the old `[^\s/?#]+[^\s]*` quadratic), in three layouts:
 *   - one:    a single URL of 1 MiB in the first URL field,
 *   - spread: every URL field filled up to its maxItems, 1 MiB shared out among all the URLs,
 *   - many:   512 URLs of 2 KiB in the first list (past maxItems: the validators check every item),
 * each with two endings: a host of letters then a space (the repro), and recheck's attack
 * string for the old pattern (a host of colons then a tab). Each (model, layout, ending) is timed
 * a few times and the best kept (interference on a shared machine only slows a run down); the
 * figure is the worst of those over every model.
 */
import { catalogue } from '../generated/catalogue.js';
import { isMain, round, type BenchOutput, type RunMode } from './support.js';

type Schema = Record<string, unknown>;
type Segment = string | number;
/** A URL field: its path from the input (a number is "every item of this list"), and how many items its lists allow. */
interface UrlSlot {
  path: Segment[];
  maxItems: number[];
}

export const BODY_BYTES = 1024 * 1024;
const ENDINGS: Record<string, (bytes: number) => string> = {
  space: (bytes) => `https://${'a'.repeat(Math.max(bytes - 'https://'.length - 1, 1))} `,
  colonsTab: (bytes) => `https://p${':'.repeat(Math.max(bytes - 'https://p'.length - 1, 1))}\t`,
};
const LAYOUTS = ['one', 'spread', 'many'] as const;
type Layout = (typeof LAYOUTS)[number];

const acceptsHttps = (schema: Schema) =>
  typeof schema.pattern === 'string' && new RegExp(schema.pattern, 'u').test('https://example.com/x.png');

/** Every string slot of an input schema that takes a URL. */
export function urlSlots(schema: Schema, path: Segment[] = [], maxItems: number[] = []): UrlSlot[] {
  if (schema.type === 'string') return acceptsHttps(schema) ? [{ path, maxItems }] : [];
  if (schema.type === 'array' && schema.items)
    return urlSlots(schema.items as Schema, [...path, 0], [...maxItems, (schema.maxItems as number | undefined) ?? 4]);
  if (schema.type === 'object' && schema.properties) {
    return Object.entries(schema.properties as Record<string, Schema>).flatMap(([name, sub]) =>
      urlSlots(sub, [...path, name], maxItems),
    );
  }
  return [];
}

/** Puts `value(i)` at every place `path` names, with `counts[k]` items in the k-th list on the way. */
function fill(target: Record<string, unknown>, path: Segment[], counts: number[], value: () => string): void {
  const [head, ...rest] = path;
  if (typeof head === 'number') throw new Error('a path starts with a field name');
  if (rest.length === 0) {
    target[head] = value();
    return;
  }
  if (typeof rest[0] === 'number') {
    const [count, ...more] = counts;
    const after = rest.slice(1);
    const list = (target[head] as unknown[] | undefined) ?? [];
    target[head] = list;
    for (let i = 0; i < count; i++) {
      if (after.length === 0) list[i] = value();
      else {
        list[i] ??= {};
        fill(list[i] as Record<string, unknown>, after, more, value);
      }
    }
    return;
  }
  target[head] ??= {};
  fill(target[head] as Record<string, unknown>, rest, counts, value);
}

/** How many URLs a slot holds with `counts` items in each list on its path. */
const itemsOf = (counts: number[]) => counts.reduce((n, c) => n * c, 1);

/** A hostile input for a model: `bytes` of failing URLs laid out as `layout`, plus a short prompt. */
export function hostileInput(
  schema: Schema,
  layout: Layout,
  ending: (bytes: number) => string,
  bytes = BODY_BYTES,
): Record<string, unknown> | undefined {
  const slots = urlSlots(schema);
  if (slots.length === 0) return undefined;
  const input: Record<string, unknown> = { prompt: 'a red fox running through snow' };
  if (layout === 'one') {
    fill(
      input,
      slots[0].path,
      slots[0].maxItems.map(() => 1),
      () => ending(bytes),
    );
  } else if (layout === 'many') {
    const list = slots.find((s) => s.maxItems.length > 0) ?? slots[0];
    const counts = list.maxItems.map((_, k) => (k === list.maxItems.length - 1 ? 512 : 1));
    fill(input, list.path, counts, () => ending(Math.floor(bytes / itemsOf(counts))));
  } else {
    const total = slots.reduce((n, s) => n + itemsOf(s.maxItems), 0);
    for (const slot of slots) fill(input, slot.path, slot.maxItems, () => ending(Math.floor(bytes / total)));
  }
  return input;
}

/** Best of `runs` timings (ms) of one validation. */
function bestOf(runs: number, validate: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    validate();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

export async function benchHostile(mode: RunMode, bytes = BODY_BYTES): Promise<BenchOutput> {
  const runs = mode.quick ? 3 : 7;
  let worst = { ms: 0, where: '' };
  let models = 0;
  let bodies = 0;
  for (const [id, model] of catalogue) {
    let counted = false;
    for (const layout of LAYOUTS) {
      for (const [endingName, ending] of Object.entries(ENDINGS)) {
        const input = hostileInput(model.info.inputSchema, layout, ending, bytes);
        if (!input) continue;
        if (!counted) models++;
        counted = true;
        bodies++;
        const check = model.validate(input);
        if (check.ok) throw new Error(`${id} accepts a hostile ${layout}/${endingName} body`);
        const ms = bestOf(runs, () => model.validate(input));
        if (ms > worst.ms)
          worst = { ms, where: `${id} ${layout}/${endingName} (${JSON.stringify(input).length} bytes)` };
      }
    }
  }
  return {
    figures: { hostileBodyValidationMs: round(worst.ms, 2) },
    notes: [
      `hostile: ${bodies} bodies of ${Math.round(bytes / 1024)} KiB of failing URLs (${LAYOUTS.join(', ')} x ${Object.keys(ENDINGS).join(', ')}) over ${models} models with URL fields, each validated ${runs} times (best kept); worst ${worst.ms.toFixed(2)} ms: ${worst.where}`,
    ],
  };
}

if (isMain(import.meta.url)) {
  const bytesArg = process.argv.find((a) => a.startsWith('--bytes='));
  console.log(
    JSON.stringify(
      await benchHostile(
        { quick: process.argv.includes('--quick') },
        bytesArg ? Number(bytesArg.slice('--bytes='.length)) : BODY_BYTES,
      ),
    ),
  );
}
