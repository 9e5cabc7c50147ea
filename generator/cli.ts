import { resolve } from 'node:path';
import { generate } from './generate.js';
import { SpecError } from './load/spec-error.js';

/** npm run generate [-- --check] [--root DIR]: exit 1 on drift or on a broken spec file. */
export async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const rootIndex = argv.indexOf('--root');
  const root = resolve(rootIndex >= 0 ? argv[rootIndex + 1] : process.cwd());
  const started = process.hrtime.bigint();
  try {
    const result = await generate(root, { check });
    const ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
    if (check) {
      if (result.stale.length) {
        console.error(
          `generated/ is stale; run npm run generate. Stale files:\n${result.stale.map((f) => `  ${f}`).join('\n')}`,
        );
        return 1;
      }
      console.log(`generated/ is up to date (${ms} ms)`);
    } else {
      console.log(`generated/: ${result.written.length} written, ${result.removed.length} removed (${ms} ms)`);
    }
    return 0;
  } catch (error) {
    if (error instanceof SpecError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
