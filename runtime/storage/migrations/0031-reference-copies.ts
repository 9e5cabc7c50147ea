import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * reference_copies (issue 37 point 3): the service's own copy of each external reference a task's
 * check lane fetched, stored whole and measured there, so that the provider is sent a signed link
 * to those very bytes instead of the customer's URL. One row per task and reference site (its
 * field path, `input.reference_image_urls[0]`); the object lives under `blob_key` until the
 * task's content is purged.
 */
export function referenceCopies(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reference_copies')
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('bytes', int, (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('reference_copies_pk', ['task_id', 'path'])
        .execute();
    },
  };
}
