/* generated/validators/index.ts: every model's generated validator (its module under validators/), by model id. */
import type { ValidationResult } from '../support/template.js';

/** The generated validator of every model, by model id. */
export const validators: ReadonlyMap<string, (input: unknown) => ValidationResult> = new Map();
