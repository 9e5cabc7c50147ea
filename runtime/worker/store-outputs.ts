import type { Context } from '../context.js';
import type { DeploymentOutput } from '../deployments/deployment.js';
import { probeStored, type Probed } from '../files/probe.js';
import type { StoredOutput, TaskRow } from '../tasks/task-record.js';

export type Stored =
  | {
      ok: true;
      outputs: StoredOutput[];
      firstVideoSeconds?: number;
      /** The first video as probed from its stored bytes (undefined when the deployment declared its length): checked against the request. */
      firstVideo?: Probed;
    }
  | { ok: false; reason: string };

/**
 * Writes a deployment's outputs to the blob store as they arrive (a provider's download is a
 * stream: never whole in memory) and measures each one the deployment did not: its type and
 * length from the stored bytes (runtime/files/probe.ts), as a provider's claims are not what the
 * service bills. A result that is not a readable video (for a video output), an output that is
 * neither a video nor a picture, or a result without a video of a length is refused: what was
 * stored is deleted, and the caller fails the task. A write that fails (a download cut short)
 * throws, leaving nothing stored of that output; earlier outputs are deleted too.
 *
 * The keys are the claim's own (`claim`: an id drawn for this run of the poll item): a second poll of the
 * same job (a lease taken over mid-poll) writes other keys, so the cleanup of one claim can never
 * delete what another stored, whichever of them the task's success names.
 */
export async function storeOutputs(
  ctx: Context,
  task: TaskRow,
  outputs: DeploymentOutput[],
  claim: string,
): Promise<Stored> {
  const stored: StoredOutput[] = [];
  const dropAll = async () => {
    for (const output of stored) await ctx.blobs.delete(output.key);
  };
  let firstVideoSeconds: number | undefined;
  let firstVideo: Probed | undefined;
  try {
    for (const [index, output] of outputs.entries()) {
      const key = `outputs/${task.id}/${claim}-${index}.${output.extension}`;
      const { bytes, contentId } = output;
      if (contentId && ctx.blobs.putShared && bytes instanceof Uint8Array)
        await ctx.blobs.putShared(key, contentId, bytes);
      else await ctx.blobs.put(key, bytes);
      const entry: StoredOutput = {
        key,
        mime: output.mime,
        ...(output.durationSeconds === undefined ? {} : { durationSeconds: output.durationSeconds }),
      };
      stored.push(entry);
      if (output.durationSeconds === undefined) {
        const probed = (await probeStored(ctx.blobs, key))?.probed;
        // A video or a picture (a last frame), whatever the provider declared: a page, a text or a sound is no result.
        const media = probed?.kind === 'video' || probed?.kind === 'image';
        if (
          !probed ||
          !media ||
          (output.mime.startsWith('video/') && (probed.kind !== 'video' || !(probed.durationSeconds! > 0)))
        ) {
          await dropAll();
          return { ok: false, reason: `The provider's result ${index + 1} is not a video whose length can be read.` };
        }
        entry.mime = probed.mime;
        // An image (a returned last frame) has no length.
        if (probed.durationSeconds !== undefined) entry.durationSeconds = probed.durationSeconds;
        if (firstVideo === undefined && probed.kind === 'video') firstVideo = probed;
      }
      const { mime, durationSeconds } = entry;
      if (firstVideoSeconds === undefined && mime.startsWith('video/')) firstVideoSeconds = durationSeconds ?? 0;
    }
  } catch (error) {
    await dropAll();
    throw error;
  }
  // A model's result is a video: without one of a length the task fails (hold released), never succeeds charged 0.
  if (!(firstVideoSeconds! > 0)) {
    await dropAll();
    return { ok: false, reason: "The provider's result holds no video whose length can be read." };
  }
  return {
    ok: true,
    outputs: stored,
    ...(firstVideoSeconds !== undefined ? { firstVideoSeconds } : {}),
    ...(firstVideo !== undefined ? { firstVideo } : {}),
  };
}

/** What the operator pays for the task: per video and per started second of output, in millionths of a USD (integers only). */
export function upstreamCostMicros(
  cost: { perSecondMicros: number; perVideoMicros: number } | undefined,
  outputSeconds: number,
): number | null {
  if (!cost) return null;
  const wholeSeconds = Math.ceil(Math.round(outputSeconds * 1000) / 1000);
  return cost.perVideoMicros + cost.perSecondMicros * wholeSeconds;
}
