/*
 * Parsed JSON as the checks and prices read it: copied before defaults are filled in, bounded in
 * depth, and a field counted as given or by its items.
 */

/** How deep a request's JSON may nest (a model input needs a handful of levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * A copy of parsed JSON data, so that filling in defaults never touches the caller's object.
 * Iterative (an explicit stack, not recursion): a body nested thousands of levels deep cannot
 * overflow the call stack here.
 */
export function cloneJson<T>(value: T): T {
  const root = emptyCopy(value);
  if (root === value) return value;
  // Two parallel stacks (originals, copies) rather than one of pairs: no array per node, and the
  // copy is about 2.8 times faster (bench/README.md, issue 19).
  const originals: unknown[] = [value];
  const copies: unknown[] = [root];
  while (originals.length > 0) {
    const from = originals.pop();
    const to = copies.pop();
    if (Array.isArray(from)) {
      for (let i = 0; i < from.length; i++) {
        const original: unknown = from[i];
        const item = emptyCopy(original);
        (to as unknown[])[i] = item;
        if (item !== original) {
          originals.push(original);
          copies.push(item);
        }
      }
      continue;
    }
    for (const key in from as object) {
      if (!Object.hasOwn(from as object, key)) continue;
      const original = (from as Record<string, unknown>)[key];
      const item = emptyCopy(original);
      // An own "__proto__" key stays a plain key (then rejected as unknown), never a prototype.
      if (key === '__proto__')
        Object.defineProperty(to, key, { value: item, enumerable: true, writable: true, configurable: true });
      else (to as Record<string, unknown>)[key] = item;
      if (item !== original) {
        originals.push(original);
        copies.push(item);
      }
    }
  }
  return root as T;
}

/** An empty array or object to copy `item` into, or `item` itself when it is a primitive. */
function emptyCopy(item: unknown): unknown {
  return Array.isArray(item) ? new Array(item.length) : typeof item === 'object' && item !== null ? {} : item;
}

/**
 * The path (`input.a[0].b`, from `prefix`) of the first value nested deeper than `limit`
 * levels, or undefined. Iterative, and it stops at the first one: linear in the data's size.
 */
export function tooDeepPath(value: unknown, limit = MAX_JSON_DEPTH, prefix = 'input'): string | undefined {
  const stack: [unknown, string, number][] = [[value, prefix, 0]];
  while (stack.length > 0) {
    const [item, path, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return path;
    if (Array.isArray(item))
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}[${i}]`, depth + 1]);
    else
      for (const key of Object.keys(item).reverse())
        stack.push([(item as Record<string, unknown>)[key], path ? `${path}.${key}` : key, depth + 1]);
  }
  return undefined;
}

/** A field counts as given when it is present and, for arrays, not empty. */
export function given(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

export function countItems(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}
