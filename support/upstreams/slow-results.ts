import type { ServerResponse } from 'node:http';

/**
 * Hostile result bodies for the loopback protocol servers (issue 25, N2 and N7), and how a server
 * sends one while telling a finished download from one the client gave up on.
 */

/** `bytes` fed in pieces over about `overMs`: a result that takes its time (a slow CDN, a drip-feeding upstream). */
export async function* drip(bytes: Buffer, overMs: number, pieceMs = 200): AsyncGenerator<Buffer> {
  const pieces = Math.max(1, Math.min(bytes.length, Math.ceil(overMs / pieceMs)));
  const size = Math.ceil(bytes.length / pieces);
  for (let i = 0; i * size < bytes.length; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, pieceMs));
    yield bytes.subarray(i * size, (i + 1) * size);
  }
}

/** A body that never ends (no Content-Length): 64 KiB pieces of zeros for as long as the client reads. */
export async function* endless(): AsyncGenerator<Buffer> {
  const piece = Buffer.alloc(64 * 1024);
  for (;;) yield piece;
}

/** What became of downloads a server sent as streams: still open, finished, or closed by the client first. */
export class DownloadLog {
  open = 0;
  completed = 0;
  cut = 0;

  /** Writes the chunks with backpressure; stops when the client goes away. */
  async send(response: ServerResponse, chunks: AsyncIterable<Buffer>): Promise<void> {
    this.open++;
    let gone = false;
    let wake: (() => void) | undefined;
    response.once('close', () => {
      gone = !response.writableFinished;
      wake?.();
    });
    try {
      for await (const chunk of chunks) {
        if (gone) break;
        if (!response.write(chunk))
          await new Promise<void>((resolve) => {
            wake = resolve;
            response.once('drain', resolve);
          });
        if (gone) break;
      }
      if (!gone) response.end();
    } finally {
      this.open--;
      if (gone) this.cut++;
      else this.completed++;
    }
  }
}
