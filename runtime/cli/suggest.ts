import { COMMANDS } from './commands.js';

/** Edit distance (insertions, deletions, substitutions) between two short words. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/**
 * The command words a mistyped first word was probably meant to be (`acounts` -> `accounts`,
 * `deploy` -> `deployments`): within two edits, or the start of a command's word; nearest first.
 */
export function suggestCommands(word: string): string[] {
  const firsts = [...new Set(COMMANDS.map((command) => command.words[0]))];
  return firsts
    .map((first) => ({ first, d: first.startsWith(word) && word.length >= 3 ? 0 : distance(word, first) }))
    .filter(({ d }) => d <= 2)
    .sort((a, b) => a.d - b.d || a.first.localeCompare(b.first))
    .map(({ first }) => first);
}
