import { assetIdOf } from '../assets/library.js';
import { peek } from '../files/byte-reader.js';
import { headWanted, probeSource } from '../files/probe.js';
import { FetchFailure, openCapped, type FetchOptions } from '../files/remote-fetch.js';
import type { DeploymentJob } from './deployment.js';

export type ClipLength = { ok: true; seconds: number } | { ok: false; detail: string };

/**
 * The length of a video clip behind a URL, measured the way a provider measures what it bills:
 * fetched once through the outbound guard (no redirects, capped in bytes and time) and read as a
 * stream only as far as the probe needs (the head for the type, then the top-level boxes up to the
 * movie header; media data is skipped, never held). A clip that cannot be fetched, is not a video
 * or has no readable length is a failure with an English detail.
 */
export async function measureClip(url: string, options: FetchOptions): Promise<ClipLength> {
  const opened = await openCapped(url, options);
  if (!opened.ok) return { ok: false, detail: `could not be fetched (${opened.detail})` };
  try {
    const { head, rest, close } = await peek(opened.body, headWanted);
    try {
      // The size is only read by the non-MP4 probes; the head is all there is when the file is shorter.
      const probed = await probeSource({
        size: head.length < headWanted(head) ? head.length : 0,
        head,
        open: async () => rest,
      });
      if (probed?.kind !== 'video') return { ok: false, detail: 'is not a video file' };
      const seconds = probed.durationSeconds;
      if (seconds === undefined || !(seconds > 0))
        return { ok: false, detail: 'is a video whose length cannot be read' };
      return { ok: true, seconds };
    } finally {
      await close();
    }
  } catch (error) {
    const detail = error instanceof FetchFailure ? error.detail : (error as Error).message;
    return { ok: false, detail: `could not be read (${detail})` };
  } finally {
    opened.close();
  }
}

/**
 * The billed reference clips of a job (the catalogue's referenceClips field), measured as a
 * provider measures what it bills: each external clip fetched through the outbound guard and
 * probed from a stream, all at once. Library assets are null (the service has their stored
 * length). A clip that cannot be fetched or measured is a reason to fail the job, as a provider
 * refuses a reference it cannot read. Undefined when the model bills no clips or none were sent.
 */
export async function measureReferenceClips(
  job: DeploymentJob,
  options: FetchOptions,
): Promise<(number | null)[] | { reason: string } | undefined> {
  const field = job.model.pricing.referenceClips?.field;
  const clips = field ? job.input[field] : undefined;
  if (!Array.isArray(clips) || clips.length === 0) return undefined;
  const lengths = await Promise.all(
    clips.map(async (clip, index) => {
      if (assetIdOf(clip) !== undefined) return null;
      const where = `input.${field}[${index}]`;
      if (typeof clip !== 'string') return { reason: `${where} is not a link to a video clip.` };
      const length = await measureClip(clip, options);
      return length.ok ? length.seconds : { reason: `${where} ${length.detail}.` };
    }),
  );
  const failure = lengths.find((l): l is { reason: string } => l !== null && typeof l === 'object');
  if (failure) return failure;
  return lengths as (number | null)[];
}
