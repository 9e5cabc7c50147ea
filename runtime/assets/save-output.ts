import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { probeStored } from '../files/probe.js';
import { newId } from '../ids.js';
import { assetRow, extensionOf, ownerOf, type AssetRow } from './library.js';
import { ensureUnlocked, storeNewAsset } from './storage.js';

/**
 * POST /assets: copies the output of a succeeded task of the calling key (read by the route, as
 * the edge reads every task of its caller) into the key's library.
 * The bytes are copied to an object of the library's own, so purging the task (by hand or when
 * its retention runs out) never touches the asset: the library keeps files until the user
 * deletes them. The first output file is saved (the generated media; a returned last frame is a
 * second output).
 */
export async function saveTaskOutput(
  ctx: Context,
  caller: Caller,
  task: { id: string; state: string; output_json: string | null },
  name: string | undefined,
): Promise<AssetRow> {
  const outputs =
    task.state === 'succeeded' && task.output_json ? (JSON.parse(task.output_json) as { key: string }[]) : [];
  const output = outputs[0];
  if (!output) throw new ApiError('invalid_parameter', { param: 'taskId' });
  const owner = ownerOf(caller);
  await ensureUnlocked(ctx, owner);
  const stored = await probeStored(ctx.blobs, output.key);
  if (!stored) throw new ApiError('invalid_parameter', { param: 'taskId' });
  const { probed } = stored;
  if (!probed) throw new ApiError('file_type_not_allowed', { param: 'taskId' });
  const object = await ctx.blobs.read(output.key);
  if (!object) throw new ApiError('invalid_parameter', { param: 'taskId' });
  const id = newId('a');
  const blobKey = `library/${id}.${extensionOf(probed.format)}`;
  const row = assetRow(
    owner,
    {
      id,
      name: name ?? `${task.id}.${extensionOf(probed.format)}`,
      probed,
      bytes: stored.size,
      blobKey,
      source: 'task',
      sourceTaskId: task.id,
    },
    ctx.clock.now(),
  );
  // The copy streams from the task's object to the library's.
  await storeNewAsset(ctx, owner, row, object.stream);
  return row;
}
