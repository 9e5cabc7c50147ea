import { peek } from './byte-reader.js';
import { headWanted, probeSource, type Probed } from './probe.js';
import { FetchFailure, openCapped, type FailureReason, type FetchOptions } from './remote-fetch.js';

/**
 * The longest movie header (moov) read of a file behind a link. A reference clip's header is tens
 * of KiB (a sample table of a few thousand frames); a longer one is refused rather than held, so
 * what a probe keeps stays bounded whatever the link sends.
 */
export const REMOTE_MOOV_MAX_BYTES = 4 * 1024 * 1024;

export type RemoteProbe =
  | {
      ok: true;
      /** Undefined: the bytes are of no type the probe knows (or a movie header it will not read). */
      probed: Probed | undefined;
      /** The file's size: its declared Content-Length, else the bytes counted to its end (`countAll`), else those read. */
      bytes: number;
    }
  | { ok: false; reason: FailureReason; detail: string };

export interface RemoteProbeOptions extends FetchOptions {
  /**
   * Read to the end to learn the size of an answer that did not declare it (a size limit to
   * judge); the bytes are counted as they pass, never kept. Otherwise the exchange ends as soon as
   * the probe has what it needs.
   */
  countAll: boolean;
}

/**
 * Fetches a file once through the outbound guard (no redirects, capped in bytes and time) and
 * probes it from the stream, keeping only what the probe needs: the head (type, image header and
 * transparency), then, for MP4/QuickTime, the movie header wherever it sits (media data is skipped
 * as it streams by, never held), or music-metadata's own streaming parse for other video and
 * audio. Memory per file: the head (1 MiB) plus a movie header of at most REMOTE_MOOV_MAX_BYTES.
 */
export async function probeRemote(url: string, options: RemoteProbeOptions): Promise<RemoteProbe> {
  const opened = await openCapped(url, options);
  if (!opened.ok) return opened;
  const body = opened.body[Symbol.asyncIterator]();
  let read = 0;
  // The probe reads through this view; its end does not end the exchange, so the rest can still be counted.
  const view: AsyncIterable<Buffer> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        const next = await body.next();
        if (!next.done) read += next.value.length;
        return next;
      },
      return: async () => ({ done: true, value: undefined }),
    }),
  };
  try {
    const { head, rest } = await peek(view, headWanted);
    const whole = head.length < headWanted(head);
    const probed = await probeSource({
      // music-metadata reads the size (non-MP4 formats); 0 when unknown, as for any stream.
      size: opened.declaredBytes ?? (whole ? head.length : 0),
      head,
      // The probe opens the bytes once at most (the movie or the audio parse): the head, then the stream as it comes.
      open: async () => rest,
      moovMaxBytes: REMOTE_MOOV_MAX_BYTES,
    });
    if (opened.declaredBytes !== undefined) return { ok: true, probed, bytes: opened.declaredBytes };
    if (options.countAll)
      for (let next = await body.next(); !next.done; next = await body.next()) read += next.value.length;
    return { ok: true, probed, bytes: read };
  } catch (error) {
    if (error instanceof FetchFailure) return { ok: false, reason: error.reason, detail: error.detail };
    return { ok: false, reason: 'network', detail: (error as Error).message };
  } finally {
    await body.return?.();
    opened.close();
  }
}
