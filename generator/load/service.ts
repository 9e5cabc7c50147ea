import type { YamlSource } from './read-yaml.js';
import type { SpecProblem } from './spec-error.js';
import type { ServiceDecision, StateTable, StateTransition } from './types.js';

/** spec/service/decisions.yaml: id -> { title, decision, interpretation? }. */
export function checkDecisions(source: YamlSource, problems: SpecProblem[]): ServiceDecision[] {
  const data = (source.data ?? {}) as Record<string, Partial<ServiceDecision>>;
  const out: ServiceDecision[] = [];
  for (const [id, entry] of Object.entries(data)) {
    if (typeof entry?.title !== 'string' || typeof entry.decision !== 'string') {
      problems.push(source.problem([id], `decision ${id} needs a title and a decision (strings)`));
      continue;
    }
    if (entry.interpretation !== undefined && typeof entry.interpretation !== 'boolean')
      problems.push(source.problem([id, 'interpretation'], 'interpretation must be true or false'));
    out.push({
      id,
      title: entry.title,
      decision: entry.decision.trim(),
      interpretation: entry.interpretation === true,
    });
  }
  return out;
}

const ORIGINS = ['specification', 'mediaforge'];
const TEXT_KEYS = ['trigger', 'condition', 'also'] as const;

/** spec/service/states.yaml: the states, the terminal ones, and rows naming only those states. */
export function checkStates(source: YamlSource, problems: SpecProblem[]): StateTable {
  const data = (source.data ?? {}) as Partial<StateTable>;
  const states = Array.isArray(data.states) ? data.states : [];
  if (states.length === 0) problems.push(source.problem(['states'], 'states must list the task states'));
  const terminal = Array.isArray(data.terminal) ? data.terminal : [];
  terminal.forEach((s, i) => {
    if (!states.includes(s)) problems.push(source.problem(['terminal', i], `unknown state "${s}"`));
  });
  const transitions: StateTransition[] = Array.isArray(data.transitions) ? data.transitions : [];
  transitions.forEach((row, i) => {
    if (!ORIGINS.includes(row?.origin))
      problems.push(source.problem(['transitions', i, 'origin'], `origin must be ${ORIGINS.join(' or ')}`));
    if (!Array.isArray(row?.from))
      problems.push(
        source.problem(
          ['transitions', i, 'from'],
          'from must be a list of states ([] for a request that creates a task)',
        ),
      );
    else
      row.from.forEach((s, j) => {
        if (!states.includes(s)) problems.push(source.problem(['transitions', i, 'from', j], `unknown state "${s}"`));
      });
    if (row?.to !== 'unchanged' && !states.includes(row?.to))
      problems.push(source.problem(['transitions', i, 'to'], `to must be a state or "unchanged", not "${row?.to}"`));
    for (const key of TEXT_KEYS)
      if (typeof row?.[key] !== 'string') problems.push(source.problem(['transitions', i, key], `${key} must be text`));
  });
  return { states, terminal, transitions };
}
