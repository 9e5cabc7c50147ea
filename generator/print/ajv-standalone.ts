import type { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';

/** ajv's standaloneCode with named exports: `{ name: schema key }` -> `export const name = <its function>`. */
type StandaloneCode = (ajv: Ajv, exports: Record<string, string>) => string;
// ajv ships CommonJS: depending on the loader the default import is the function or the module object.
const standaloneCode: StandaloneCode =
  typeof standaloneModule === 'function'
    ? (standaloneModule as StandaloneCode)
    : (standaloneModule as unknown as { default: StandaloneCode }).default;

/**
 * The one way a validator module is printed: ajv's standalone ESM code of the schemas `ajv` holds,
 * one named export per entry of `exports`. ajv prints this JavaScript itself; its ESM output still
 * calls require() for its runtime helpers and formats (ajv issue #2209), so where it does, a
 * `createRequire` line goes first. `comment` (whole lines) goes between that line and the code.
 */
export function ajvStandaloneModule(ajv: Ajv, exports: Record<string, string>, comment = ''): string {
  const code = standaloneCode(ajv, exports);
  const prelude = code.includes('require(')
    ? "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n"
    : '';
  return `${prelude}${comment}${code}\n`;
}
