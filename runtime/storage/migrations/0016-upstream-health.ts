import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Upstream health from every call (issue 28):
 * - upstream_health.last_failure_class: the failure class of the deployment's last failed call
 *   (submit, poll, download or cancel; runtime/deployments/upstream-error.ts), shown beside the
 *   reason by `deployments status` and /readyz. Null: no failure on record.
 * - tasks.first_submit_at: when the task's first submit was attempted (a slot taken, or every
 *   deployment of its model found cooling down); the submit window
 *   (MEDIAFORGE_UPSTREAM_SUBMIT_WINDOW_SECONDS) counts from it. Null: never attempted.
 */
export function upstreamHealth(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('upstream_health').addColumn('last_failure_class', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('first_submit_at', int).execute();
    },
  };
}
