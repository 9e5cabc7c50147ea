import { printSafe } from '../cli/terminal-text.js';
import { recordCliAction } from '../operator/operator-actions.js';
import type { Db } from '../storage/dialect.js';
import { createEntity, deleteEntity, EntityError, listEntities } from './entities.js';

export interface EntityValues {
  json?: boolean;
  account?: string;
  workspace?: string;
  name?: string;
  assets?: string;
  entity?: string;
}

/**
 * The console's character commands: a character is created from 2 to 4 image assets of one
 * library (the account's personal library, or a team workspace's with --workspace).
 * Returns the exit code, or undefined for an unknown subcommand.
 */
export async function entitiesCommand(
  db: Db,
  sub: string | undefined,
  values: EntityValues,
  now: number,
): Promise<number | undefined> {
  const json = values.json ?? false;
  const say = (value: Record<string, unknown>, text: string) => printSafe(json, value, text);
  if (!values.account) {
    say({ error: '--account is required' }, 'mediaforge: --account is required');
    return 2;
  }
  const owner = { accountId: values.account, library: values.workspace ?? 'personal' };
  try {
    if (sub === 'create') {
      const assetIds = (values.assets ?? '')
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
      const created = await createEntity(db, owner, values.name ?? '', assetIds, now);
      await recordCliAction(db, 'entity.create', created.entityId, { ...owner, name: values.name, assetIds }, now);
      say(
        { ...created, name: values.name, assetIds },
        `character ${values.name} (${created.entityId}) from ${assetIds.join(', ')}`,
      );
      return 0;
    }
    if (sub === 'list') {
      const items = await listEntities(db, owner);
      say(
        { items },
        items.map((e) => `${e.entityId} @${e.name} ${e.assetIds.join(',')}`).join('\n') || 'no characters',
      );
      return 0;
    }
    if (sub === 'delete') {
      const deleted = await deleteEntity(db, owner, values.entity ?? '', now);
      if (deleted) await recordCliAction(db, 'entity.delete', values.entity ?? '', owner, now);
      say({ deleted }, deleted ? 'deleted' : 'no such character');
      return deleted ? 0 : 1;
    }
  } catch (error) {
    if (!(error instanceof EntityError)) throw error;
    say({ error: error.message }, `mediaforge: ${error.message}`);
    return 1;
  }
  return undefined;
}
