/** A problem in a hand-edited spec file, reported as `file:line:col: message` (never a stack trace). */
export interface SpecProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

export class SpecError extends Error {
  constructor(readonly problems: SpecProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'SpecError';
  }
}

export function formatProblem(p: SpecProblem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}`;
}
