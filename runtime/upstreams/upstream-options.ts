import type { ResultLinkOptions } from './upstream-http.js';

/** What an adapter of a real upstream is built with (from the operator's deployments file and the service's settings). */
export interface UpstreamOptions {
  /** The upstream's name in the deployments file: the deployment name stored on its tasks. */
  name: string;
  baseUrl: string;
  /** Read at start from the variable the file names (`secretEnv`); never in the file. */
  apiKey?: string;
  /** Hand the upstream a callback URL that wakes the task's poll (the poll stays the truth). */
  callbacks: boolean;
  /** Longest wait for one answer's status and headers (connect and send included). */
  requestTimeoutMs: number;
  /** The same for a submit (the deployments file's `submitTimeoutSeconds`; requestTimeoutMs by default): past it the outcome is unknown. */
  submitTimeoutMs?: number;
  /** How result links are downloaded: size cap, time, the guard for links off the upstream's origin. */
  results: ResultLinkOptions;
  /** Poll again after this long when the upstream gives neither progress nor a hint. */
  pollFallbackMs: number;
  now: () => number;
  /**
   * Tells the upstream's redactor of a credential the adapter derived from the key (a signed token)
   * and when it expires, before it is sent: an upstream that echoes it finds it redacted like the key.
   */
  hideDerived?: (credential: string, expiresAt: number) => void;
}

/** The file extension of a media type (`video/mp4` -> mp4); the stored object is probed anyway. */
export function extensionOf(mime: string | undefined): string {
  const type = (mime ?? '').split(';')[0].trim().toLowerCase();
  return (
    {
      'video/mp4': 'mp4',
      'video/quicktime': 'mov',
      'video/webm': 'webm',
      'image/png': 'png',
      'image/jpeg': 'jpg',
      'image/webp': 'webp',
      'audio/mpeg': 'mp3',
      'audio/wav': 'wav',
    }[type] ?? 'mp4'
  );
}

/** The media type a result link's file name says (`.../output.mp4` -> video/mp4; video/mp4 when it says nothing): the stored bytes are probed anyway. */
export function mimeOfLink(link: string): string {
  let path = link;
  try {
    path = new URL(link).pathname;
  } catch {
    // Not a URL: read the text as a path.
  }
  const extension = /\.([A-Za-z0-9]{2,5})$/.exec(path)?.[1]?.toLowerCase();
  return (
    {
      mp4: 'video/mp4',
      mov: 'video/quicktime',
      webm: 'video/webm',
      png: 'image/png',
      jpg: 'image/jpeg',
      jpeg: 'image/jpeg',
      webp: 'image/webp',
      mp3: 'audio/mpeg',
      wav: 'audio/wav',
    }[extension ?? ''] ?? 'video/mp4'
  );
}
