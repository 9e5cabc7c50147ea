import { fileURLToPath } from 'node:url';
import { loadCatalogue } from '../../generator/load/catalogue.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let cached: ReturnType<typeof loadCatalogue> | undefined;
/** The catalogue of this checkout's spec/, loaded once per test file. */
export function projectCatalogue() {
  cached ??= loadCatalogue(ROOT);
  return cached;
}
