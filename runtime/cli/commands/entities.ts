/** `mediaforge entities ...`: the console's characters (runtime/assets/entities-cli.ts). */
import { entitiesCommand } from '../../assets/entities-cli.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';

export async function entities(sub: string, { values }: CommandInput): Promise<number> {
  const code = await withCommandDb(commandConfig(values), (db) =>
    entitiesCommand(db, sub, values as Parameters<typeof entitiesCommand>[2], Date.now()),
  );
  if (code === undefined) throw new Error(`no entities command ${sub}`);
  return code;
}
