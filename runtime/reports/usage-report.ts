import { creditsToUsd } from '../../generated/support.js';
import type { UsageRow } from '../tasks/task-rows.js';
import { csvLine } from './csv.js';

export interface UsageLine {
  tasks: number;
  credits: number;
  cost: string;
}
export interface UsageReport {
  byDay: (UsageLine & { day: string })[];
  byModel: (UsageLine & { model: string })[];
}

/** Tasks by UTC day and by model: counts and settled charges (a task not settled counts 0 credits). */
export function usageReport(rows: readonly UsageRow[]): UsageReport {
  const byDay = new Map<string, { tasks: number; credits: number }>();
  const byModel = new Map<string, { tasks: number; credits: number }>();
  for (const row of rows) {
    const credits = Number(row.settled) === 1 ? Number(row.charged_credits ?? 0) : 0;
    const day = new Date(Number(row.created_at)).toISOString().slice(0, 10);
    for (const [map, key] of [
      [byDay, day],
      [byModel, row.model],
    ] as const) {
      const entry = map.get(key) ?? { tasks: 0, credits: 0 };
      entry.tasks += 1;
      entry.credits += credits;
      map.set(key, entry);
    }
  }
  const sorted = (map: Map<string, { tasks: number; credits: number }>) =>
    [...map.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, e]) => ({ key, tasks: e.tasks, credits: e.credits, cost: creditsToUsd(e.credits) }));
  return {
    byDay: sorted(byDay).map(({ key, ...e }) => ({ day: key, ...e })),
    byModel: sorted(byModel).map(({ key, ...e }) => ({ model: key, ...e })),
  };
}

/** The report as CSV: `section,key,tasks,credits,cost`, the days first, then the models. */
export function usageCsv(report: UsageReport): string {
  return [
    csvLine(['section', 'key', 'tasks', 'credits', 'cost']),
    ...report.byDay.map((d) => csvLine(['day', d.day, d.tasks, d.credits, d.cost])),
    ...report.byModel.map((m) => csvLine(['model', m.model, m.tasks, m.credits, m.cost])),
  ].join('');
}
