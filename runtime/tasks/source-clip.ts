import type { CatalogueModel, ModelInfo } from '../../generated/catalogue.js';
import type { PriceFacts } from '../../generated/support.js';
import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { StoredOutput } from './task-record.js';

/**
 * The supplied clip of a model that works on one (the catalogue's `pricing.sourceClip`: extend or
 * edit a finished clip). Its value is an https URL, a service:// asset, or the id of a task: a task
 * id must name a succeeded task of the calling API key, and that task's output is the clip.
 */

/** A source value that names a task rather than a URL or an asset (the formats also accept those). */
const TASK_ID = /^task_[A-Za-z0-9_-]{1,64}$/;

/** Output length (seconds) of a succeeded task of the calling key; undefined for any other task id. */
export type SourceClipLookup = (taskId: string) => Promise<number | undefined>;

/**
 * The output length of a succeeded task of the API key whose content still exists. Unknown ids,
 * another key's or account's tasks, unfinished, failed, expired and purged ones all give undefined.
 */
export async function succeededClipSeconds(
  ctx: Context,
  apiKeyId: string,
  taskId: string,
): Promise<number | undefined> {
  const row = await ctx.db.kysely
    .selectFrom('tasks')
    .select(['state', 'output_json', 'purged_at'])
    .where('id', '=', taskId)
    .where('api_key_id', '=', apiKeyId)
    .executeTakeFirst();
  if (!row || row.state !== 'succeeded' || row.purged_at !== null || !row.output_json) return undefined;
  const outputs = JSON.parse(row.output_json) as StoredOutput[];
  const clip = outputs.find((o) => o.mime.startsWith('video/')) ?? outputs[0];
  return typeof clip?.durationSeconds === 'number' ? clip.durationSeconds : undefined;
}

/** The lookup createTask, quote and retry use: tasks of the calling key only. */
export function sourceClipsOf(ctx: Context, caller: Caller): SourceClipLookup {
  return (taskId) => succeededClipSeconds(ctx, caller.keyId, taskId);
}

/** The task a model's source field names, if its value is a task id. */
export function sourceTaskId(model: ModelInfo, input: Record<string, unknown>): string | undefined {
  const clip = model.pricing.sourceClip;
  const value = clip ? input[clip.field] : undefined;
  return typeof value === 'string' && TASK_ID.test(value) ? value : undefined;
}

/**
 * Pricing facts about the source clip at acceptance. A task id must name a succeeded task of the
 * caller's key: anything else is 404 40401, the answer recordInfo gives for an unknown task, so
 * another key's task cannot be told apart from a missing one. Its output length is then a known
 * fact (the price no longer assumes one). URLs and assets are measured later. Without a lookup
 * (a caller that cannot vouch for the key) a task id is refused the same way.
 */
export async function sourceClipFacts(
  model: CatalogueModel,
  input: Record<string, unknown>,
  lookup?: SourceClipLookup,
): Promise<PriceFacts> {
  const taskId = sourceTaskId(model.info, input);
  if (taskId === undefined) return {};
  const seconds = lookup ? await lookup(taskId) : undefined;
  if (seconds === undefined)
    throw new ApiError('task_not_found', { param: `input.${model.info.pricing.sourceClip!.field}` });
  return { sourceClipSeconds: seconds };
}
