import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { cloneJson, MAX_JSON_DEPTH, tooDeepPath } from '../../generated/support.js';

/** `{"a": {"a": ... }}` nested `depth` levels, built without recursion. */
function nestedObject(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
function nestedArray(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/**
 * The generated validators copy their input before filling in defaults: the copy walks the data
 * without recursion, so input nested far past the call stack's depth is reported, not thrown.
 * (The HTTP layer refuses bodies nested past MAX_JSON_DEPTH before this; a library caller of the
 * generated modules does not pass through it.)
 */
describe('deeply nested input to the generated modules', () => {
  const deep = 20_000;

  it.each([
    [
      'an unknown field nested 20,000 objects deep',
      (v: unknown) => ({ prompt: 'a cat', extra: v }),
      nestedObject(deep),
    ],
    ['the prompt nested 20,000 arrays deep', (v: unknown) => ({ prompt: v }), nestedArray(deep)],
  ])("every model's validator reports %s as invalid", (_name, build, value) => {
    for (const model of catalogue.values()) {
      const result = model.validate(build(value));
      expect(result.ok, model.info.id).toBe(false);
    }
  });

  it('cloneJson copies deep data and keeps __proto__ a plain key', () => {
    const copy = cloneJson(nestedArray(deep)) as unknown[];
    let node: unknown = copy;
    let depth = 0;
    while (Array.isArray(node)) {
      node = node[0];
      depth++;
    }
    expect([depth, node]).toEqual([deep, 'x']);
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "b": [1, {"c": null}]}');
    const cloned = cloneJson(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(cloned)).toBe(Object.prototype);
    expect(Object.keys(cloned)).toEqual(['__proto__', 'b']);
    expect(cloned.b).toEqual([1, { c: null }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each<[string, { given: unknown; want: string | undefined }]>([
    ['flat input', { given: { prompt: 'x', list: [1, 2] }, want: undefined }],
    ['exactly at the bound', { given: { a: nestedArray(MAX_JSON_DEPTH - 1) }, want: undefined }],
    [
      'one level past the bound',
      { given: { a: nestedArray(MAX_JSON_DEPTH) }, want: `input.a${'[0]'.repeat(MAX_JSON_DEPTH - 1)}` },
    ],
    [
      '20,000 levels',
      { given: { b: 1, a: { c: nestedObject(deep) } }, want: `input.a.c${'.a'.repeat(MAX_JSON_DEPTH - 2)}` },
    ],
  ])('tooDeepPath: %s', (_name, { given, want }) => {
    expect(tooDeepPath(given)).toBe(want);
  });
});
