import type { Environment } from '../config.js';
import type { Db } from '../storage/dialect.js';
import { type DeploymentsPlan, parseDeployments } from './deployments-file.js';

/** The settings row that holds the deployments file the service last started with (none: the simulator serves every model). */
const KEY = 'served_deployments';

interface Recorded {
  file: string;
  text: string;
}

/**
 * Records, at start, the plan this service serves: the deployments file's name and text (variable
 * names only, never a key), or nothing when it serves every model on the simulator. So
 * `deployments status` without --deployments reads the plan the running service reads. Several
 * processes of one service read one file; the last to start is the one recorded.
 */
export async function recordServedPlan(db: Db, plan: DeploymentsPlan | undefined): Promise<void> {
  if (!plan) {
    await db.kysely.deleteFrom('settings').where('key', '=', KEY).execute();
    return;
  }
  const value = JSON.stringify({ file: plan.file, text: plan.text } satisfies Recorded);
  await db.kysely
    .insertInto('settings')
    .values({ key: KEY, value })
    .onConflict((c) => c.column('key').doUpdateSet({ value }))
    .execute();
}

/** The plan the service recorded at its last start, read without its secrets; undefined: the simulator serves every model. */
export async function readServedPlan(db: Db, env: Environment): Promise<DeploymentsPlan | undefined> {
  const row = await db.kysely.selectFrom('settings').select('value').where('key', '=', KEY).executeTakeFirst();
  if (!row) return undefined;
  const recorded = JSON.parse(row.value) as Recorded;
  return parseDeployments(recorded.file, recorded.text, env, { withoutSecrets: true });
}
