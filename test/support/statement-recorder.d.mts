/** The types of test/support/statement-recorder.mjs (plain JavaScript: it loads before any TypeScript loader). */
export function normalizedStatement(text: unknown): string;
export function stackSites(stack: unknown): { file: string; line: number }[];
