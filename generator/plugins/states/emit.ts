import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { StateTable, StateTransition } from '../../load/types.js';
import type { GeneratedFile, Plugin, PluginContext } from '../../plugin.js';

const hbs = Handlebars.create();
/** One Markdown table cell: pipes escaped, `<` outside code spans escaped, on one line. */
hbs.registerHelper('cell', (text: unknown) =>
  String(text)
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 ? part : part.replace(/</g, '\\<')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' '),
);
const template = hbs.compile(readFileSync(new URL('./templates/states.hbs', import.meta.url), 'utf8'), {
  noEscape: true,
});

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((s) => b.includes(s));
const states = (list: string[]) => list.map((s) => `\`${s}\``).join(' or ');

/** The "From" cell as the specification words it: (none), any terminal state, or the states. */
export function fromText(row: StateTransition, table: StateTable): string {
  if (row.from.length === 0) return '(none)';
  return sameSet(row.from, table.terminal) ? 'any terminal state' : states(row.from);
}

export function toText(row: StateTransition): string {
  return row.to === 'unchanged' ? 'unchanged' : `\`${row.to}\``;
}

function emit({ catalogue }: PluginContext): GeneratedFile[] {
  const table = catalogue.states;
  const rows = table.transitions.map((row) => ({ ...row, from: fromText(row, table), to: toText(row) }));
  const contents = template({ states: table.states, terminal: table.terminal, rows });
  return [
    {
      path: 'docs/states.md',
      contents: `${contents
        .replace(/[ \t]+\n/g, '\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()}\n`,
      inputs: ['spec/service/states.yaml'],
    },
  ];
}

/** generated/docs/states.md: the specification's state table and mediaforge's additions, in one table. */
export const statesPlugin: Plugin = { name: 'states', emit };
