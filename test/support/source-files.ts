import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.js';

/** Every file under a folder of the checkout whose name matches `ending`, as paths relative to the root (`runtime/http/app.ts`). */
export function filesUnder(dir: string, ending: RegExp): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path, ending);
    return ending.test(name) ? [path] : [];
  });
}

/** Every .ts file under a folder of the checkout, relative to the root: what the fitness tests read. */
export const tsFiles = (dir: string): string[] => filesUnder(dir, /\.ts$/);
