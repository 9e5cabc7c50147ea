import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Submits whose outcome is unknown on a protocol without an idempotency key (issue 37): the task
 * failed with its hold released, but a job may run at the upstream the operator pays.
 * - tasks.unknown_submit_at: when that submit was given up (the deployment is tasks.deployment,
 *   the request tasks.input_json); null: no such submit.
 * - tasks.unknown_submit_cost_micros: the declared cost of the job as requested (the margin
 *   report's possibly abandoned cost); null: no cost declared.
 * Whether the job was found is tasks.deployment_handle (then reconciled as any other) or
 * tasks.upstream_final_state `absent` (the provider's list showed none).
 */
export function unknownSubmits(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('unknown_submit_at', int).execute();
      await db.schema.alterTable('tasks').addColumn('unknown_submit_cost_micros', int).execute();
    },
  };
}
