/** A mistake in how a command was called: the CLI prints its one line and the command's usage, and exits 2. */
export class UsageError extends Error {}

/** A whole number from a flag's text, at least `min`. */
export function wholeNumber(value: string | undefined, name: string, min = 0): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a whole number${min ? ` >= ${min}` : ''}`);
  }
  return Number(value);
}

/** The flag's value, or a usage error naming it. */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
