import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * tasks.upstream_callback_at: when an upstream's callback first woke the task's poll (null: none
 * yet). An upstream reports the end of a job once, so later callbacks to the same URL are replays:
 * answered without waking another poll (runtime/tasks/upstream-callback.ts; issue 25, N10).
 */
export function upstreamCallbacks(engine: Engine) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('upstream_callback_at', bigint(engine)).execute();
    },
  };
}
