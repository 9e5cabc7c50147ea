import { fileURLToPath } from 'node:url';

/** The checkout's root directory. Its own module: a suite that needs only the path loads nothing else (catalogue.ts loads the generator). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
