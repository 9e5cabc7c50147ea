import type { Kysely } from 'kysely';

/**
 * tasks.reference_clip_seconds_json: the lengths of a task's billed reference clips (the
 * catalogue's referenceClips field), one per clip in order, measured by the check before the task
 * is submitted (an external clip fetched and probed, a library asset's stored length). Settlement
 * bills these lengths; nothing is fetched after the provider's job (issue 25, N3). Null until the
 * check ran, and for tasks of models that bill no clips. Text on both engines (a JSON array).
 */
export function clipLengths() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('reference_clip_seconds_json', 'text').execute();
    },
  };
}
