import type { Db } from '../storage/dialect.js';
import { deploymentStates, type DeploymentState } from './health.js';
import { healthRows } from './health-row.js';
import type { Deployments } from './router.js';
import { FAILURE_CLASSES, type FailureClass } from '../deployments/upstream-error.js';
import { COUNTERS, readCounters } from './upstream-stats.js';

/**
 * A deployment the database holds nothing about: no health row, no counted call, no task in
 * flight. Its health reads `ok` only because nothing failed there; said apart, so that a status
 * read from the wrong database, or of a deployment no task has reached yet, does not pass for
 * one that answers.
 */
export const NO_RECORD = 'no record';

export interface DeploymentStatusReport extends Omit<DeploymentState, 'state'> {
  state: DeploymentState['state'] | typeof NO_RECORD;
  submits: number;
  failures: Record<FailureClass, number>;
  polls: number;
}

/** `mediaforge deployments status` and the operator console: each deployment's state (slots, cool-down, last failure) and its totals, as every process recorded them. */
export async function deploymentsStatus(
  db: Db,
  deployments: Deployments,
  now: number,
): Promise<DeploymentStatusReport[]> {
  const names = deployments.list().map((d) => d.name);
  const [states, counters, rows] = await Promise.all([
    deploymentStates(db.kysely, deployments, now),
    readCounters(db.kysely),
    healthRows(db.kysely, names),
  ]);
  return states.map((state) => {
    const of = counters.get(state.name);
    const count = (name: string) => of?.get(name) ?? 0;
    const recorded = rows.has(state.name) || (of !== undefined && of.size > 0) || state.inFlight > 0;
    return {
      ...state,
      // Only `ok` can stand for "nothing on record"; any other state was read from a row.
      state: state.state === 'ok' && !recorded ? NO_RECORD : state.state,
      submits: count(COUNTERS.submits),
      failures: Object.fromEntries(FAILURE_CLASSES.map((f) => [f, count(COUNTERS.failure(f))])) as Record<
        FailureClass,
        number
      >,
      polls: count(COUNTERS.polls),
    };
  });
}
