import type { Db } from '../storage/dialect.js';
import { newId } from '../ids.js';
import type { LibraryOwner } from './library.js';

/**
 * Characters ("entities"): one named subject built from 2 to 4 image assets of the same library.
 * The API lists them (GET /assets/entities); the console creates and deletes them — here the
 * `mediaforge entities create|delete` commands, since the contract has no create operation. A
 * request uses one through the `elements` field, as `{ name, image_urls }` with the assets'
 * `service://a/<id>` URIs; the prompt writes `@name`.
 */
export const ENTITY_NAME = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;

export class EntityError extends Error {}

export function entityUri(entityId: string): string {
  return `service://e/${entityId}`;
}

export async function listEntities(db: Db, owner: LibraryOwner) {
  const rows = await db.kysely
    .selectFrom('entities')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => {
    const assetIds = JSON.parse(row.asset_ids) as string[];
    return {
      entityId: row.id,
      name: row.name,
      assetIds,
      uri: entityUri(row.id),
      imageUrls: assetIds.map((id) => `service://a/${id}`),
      createdAt: new Date(row.created_at).toISOString(),
    };
  });
}

/** Creates a character from 2 to 4 live image assets of the owner's library; the name is unique there. */
export async function createEntity(
  db: Db,
  owner: LibraryOwner,
  name: string,
  assetIds: string[],
  now: number,
): Promise<{ entityId: string; uri: string }> {
  if (!ENTITY_NAME.test(name))
    throw new EntityError(
      'the name must start with a letter and have at most 32 letters, digits or _ (the prompt writes @name)',
    );
  const unique = [...new Set(assetIds)];
  if (unique.length !== assetIds.length || assetIds.length < 2 || assetIds.length > 4)
    throw new EntityError('a character is built from 2 to 4 different image assets');
  const images = await db.kysely
    .selectFrom('assets')
    .select('id')
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .where('kind', '=', 'image')
    .where('id', 'in', assetIds)
    .execute();
  const found = new Set(images.map((r) => r.id));
  const missing = assetIds.filter((id) => !found.has(id));
  if (missing.length) throw new EntityError(`not image assets of this library: ${missing.join(', ')}`);
  const taken = await db.kysely
    .selectFrom('entities')
    .select('id')
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .where('name', '=', name)
    .executeTakeFirst();
  if (taken) throw new EntityError(`a character named ${name} exists already`);
  const entityId = newId('e');
  await db.kysely
    .insertInto('entities')
    .values({
      id: entityId,
      account_id: owner.accountId,
      library: owner.library,
      name,
      asset_ids: JSON.stringify(assetIds),
      created_at: now,
      deleted_at: null,
    })
    .execute();
  return { entityId, uri: entityUri(entityId) };
}

export async function deleteEntity(db: Db, owner: LibraryOwner, entityId: string, now: number): Promise<boolean> {
  const result = await db.kysely
    .updateTable('entities')
    .set({ deleted_at: now })
    .where('id', '=', entityId)
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
