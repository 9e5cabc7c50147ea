/**
 * The two small languages of a provider profile (spec/providers/README.md), as the generator
 * checks them: JSON paths (`render.files[*].href`: names joined by dots, each followed by any
 * number of `[n]` or `[*]`) and placeholders (`{name}` or `{input.field}` inside a string).
 */

/** One JSON path: a name, then `.name`, `[n]` or `[*]` steps. */
export const JSON_PATH =
  /^[A-Za-z_][A-Za-z0-9_-]*(?:\[(?:\d+|\*)\])*(?:\.[A-Za-z_][A-Za-z0-9_-]*(?:\[(?:\d+|\*)\])*)*$/;

/** `{name}` or `{input.field}`; anything else in braces is text. */
export const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\}/g;

/** Every placeholder a string names. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/**
 * An unquoted `{name}`: YAML reads it as a map of one key whose value is null. The generator
 * refuses it (the hint is to quote it) rather than send `{"name": null}`.
 */
export function isUnquotedPlaceholder(value: unknown): value is Record<string, null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length === 1 && entries[0][1] === null;
}
