import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { statesPlugin } from '../../../generator/plugins/states/emit.js';
import { ALL_STATES, OPEN_STATES, TERMINAL_STATES } from '../../../runtime/tasks/states.js';
import { projectCatalogue } from '../../support/catalogue.js';
import { copySpec, loadError } from '../../support/spec-copy.js';

const catalogue = projectCatalogue();
const table = catalogue.states;
const [file] = await statesPlugin.emit({ catalogue, emitted: new Map() });
const rows = file.contents.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| From'));

describe('states plugin', () => {
  it('emits one page, generated/docs/states.md, from spec/service/states.yaml', async () => {
    const all = await statesPlugin.emit({ catalogue, emitted: new Map() });
    expect(all.map((f) => [f.path, f.inputs])).toEqual([['docs/states.md', ['spec/service/states.yaml']]]);
    expect(file.contents.startsWith('# Task states and transitions\n')).toBe(true);
    expect(file.contents.endsWith('\n') && !file.contents.endsWith('\n\n')).toBe(true);
  });

  it('has the specification rows and mediaforge additions in one table, one line per row, each cell filled', () => {
    expect(rows.length).toBe(table.transitions.length);
    const origins = rows.map((line) => line.split(' | ').at(-1)!.replace(/ \|$/, ''));
    expect(origins.filter((o) => o === 'specification').length).toBe(9);
    expect(origins.filter((o) => o === 'mediaforge').length).toBeGreaterThan(0);
    for (const line of rows)
      expect(
        line
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .every((cell) => cell.trim().length > 0),
        line,
      ).toBe(true);
  });

  it.each([
    ['a creating request', { from: [], want: '(none)' }],
    ['all terminal states', { from: ['succeeded', 'failed', 'canceled', 'expired'], want: 'any terminal state' }],
    ['open states', { from: ['queued', 'running'], want: '`queued` or `running`' }],
  ])('writes the From cell for %s', (_, { from, want }) => {
    const row = table.transitions.find((r) => r.from.length === from.length && from.every((s) => r.from.includes(s)));
    expect(row, `no row from ${from.join(',')}`).toBeDefined();
    expect(rows.some((line) => line.startsWith(`| ${want} | ${row!.trigger} |`))).toBe(true);
  });
});

describe('the state table agrees with the runtime (runtime/tasks/states.ts)', () => {
  it('lists the runtime states and terminal states', () => {
    expect([...table.states].sort()).toEqual([...ALL_STATES].sort());
    expect([...table.terminal].sort()).toEqual([...TERMINAL_STATES].sort());
  });

  it('leaves terminal states only by "unchanged" rows: a terminal task never changes state', () => {
    for (const row of table.transitions) {
      if (
        row.from.length > 0 &&
        row.from.every((s) => (TERMINAL_STATES as readonly string[]).includes(s)) &&
        row.trigger !== 'retry'
      )
        expect(row.to, row.trigger).toBe('unchanged');
    }
  });

  it.each([
    ['queued -> running', { from: 'queued', to: 'running' }],
    ['running -> succeeded', { from: 'running', to: 'succeeded' }],
    ['queued -> failed', { from: 'queued', to: 'failed' }],
    ['running -> failed', { from: 'running', to: 'failed' }],
    ['queued -> expired', { from: 'queued', to: 'expired' }],
    ['running -> expired', { from: 'running', to: 'expired' }],
  ])('has a row for the runtime transition %s', (_, { from, to }) => {
    expect((OPEN_STATES as readonly string[]).includes(from)).toBe(true);
    expect(table.transitions.some((r) => r.from.includes(from) && r.to === to)).toBe(true);
  });

  it('has no transition into canceled (old records only)', () => {
    expect(table.transitions.filter((r) => r.to === 'canceled')).toEqual([]);
  });
});

describe('spec/service/states.yaml is checked when loaded', () => {
  it.each([
    [
      'an unknown from state',
      {
        given: 'from: [queued, running]\n    trigger: purge',
        replace: 'from: [queued, paused]\n    trigger: purge',
        want: /states\.yaml:\d+:\d+.*unknown state "paused"/,
      },
    ],
    [
      'an unknown to state',
      {
        given: 'to: running\n',
        replace: 'to: started\n',
        want: /states\.yaml:\d+:\d+.*to must be a state or "unchanged", not "started"/,
      },
    ],
  ])('reports %s at its line', (_, { given, replace, want }) => {
    const copy = copySpec();
    try {
      const path = join(copy.root, 'spec/service/states.yaml');
      const text = readFileSync(path, 'utf8');
      expect(text).toContain(given);
      writeFileSync(path, text.replace(given, replace));
      expect(loadError(copy.root).message).toMatch(want);
    } finally {
      copy.remove();
    }
  });
});
