import type { Db } from '../storage/dialect.js';
import { deploymentStates, type DeploymentState } from './health.js';
import type { Deployments } from './router.js';
import { FAILURE_CLASSES, type FailureClass } from '../deployments/upstream-error.js';
import { COUNTERS, readCounters } from './upstream-stats.js';

export interface DeploymentStatusReport extends DeploymentState {
  submits: number;
  failures: Record<FailureClass, number>;
  polls: number;
}

/** `mediaforge deployments status`: each deployment's state (slots, cool-down, last failure) and its totals, as every process recorded them. */
export async function deploymentsStatus(
  db: Db,
  deployments: Deployments,
  now: number,
): Promise<DeploymentStatusReport[]> {
  const [states, counters] = await Promise.all([
    deploymentStates(db.kysely, deployments, now),
    readCounters(db.kysely),
  ]);
  return states.map((state) => {
    const of = counters.get(state.name) ?? new Map<string, number>();
    return {
      ...state,
      submits: of.get(COUNTERS.submits) ?? 0,
      failures: Object.fromEntries(FAILURE_CLASSES.map((f) => [f, of.get(COUNTERS.failure(f)) ?? 0])) as Record<
        FailureClass,
        number
      >,
      polls: of.get(COUNTERS.polls) ?? 0,
    };
  });
}
