/** A problem in a hand-edited spec file, reported as `file:line:col: message` (never a stack trace). */
export interface SpecProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

export class SpecError extends Error {
  readonly problems: SpecProblem[];
  constructor(problems: SpecProblem[]) {
    // A problem in a base file shows up once for every model that extends it: report it once.
    const unique = [...new Map(problems.map((p) => [formatProblem(p), p])).values()];
    super(unique.map(formatProblem).join('\n'));
    this.problems = unique;
    this.name = 'SpecError';
  }
}

export function formatProblem(p: SpecProblem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}`;
}
