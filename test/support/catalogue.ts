import { loadCatalogue } from '../../generator/load/catalogue.js';
import { ROOT } from './root.js';

/** Kept for the suites being replaced in issue 38 (test/deployments/vendors/); new code imports ROOT from root.js. */
export { ROOT };

let cached: ReturnType<typeof loadCatalogue> | undefined;
/** The catalogue of this checkout's spec/, loaded once per test file. */
export function projectCatalogue() {
  cached ??= loadCatalogue(ROOT);
  return cached;
}
