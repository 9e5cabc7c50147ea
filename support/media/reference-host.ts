import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loopbackTls } from '../loopback-tls.js';
import { jpg, mp4, png, safetensors, wav } from './fixtures.js';

/**
 * A customer's reference host on loopback, over https (references must be https URLs; the fixture
 * certificate of support/tls, trusted through NODE_EXTRA_CA_CERTS, as test/support/once-clip-server.ts): serves real fixture media at fixed paths, so that a
 * suite's references can be fetched whole and measured (issue 37 point 3) instead of naming
 * `https://example.com/...`, which a real fetch cannot reach. A test can change what a path
 * serves after the check (the swap a hostile customer would try) and read how often each path
 * was fetched.
 */
export interface HostedMedia {
  bytes: Buffer;
  contentType: string;
}

/** What every host serves from the start: one of each media kind a catalogue reference takes. */
function defaultMedia(): Map<string, HostedMedia> {
  return new Map([
    ['/image.png', { bytes: png(64, 64, false), contentType: 'image/png' }],
    ['/image.jpg', { bytes: jpg(64, 64), contentType: 'image/jpeg' }],
    ['/video.mp4', { bytes: mp4(), contentType: 'video/mp4' }],
    ['/audio.wav', { bytes: wav(2), contentType: 'audio/wav' }],
  ]);
}

/**
 * What a path no one set serves, by its extension, on a host made `anyPath` (the run's shared host,
 * test/support/reference-host-setup.ts: the `https://…/a.png` a suite names is a real PNG).
 */
const BY_EXTENSION: Record<string, () => HostedMedia> = {
  png: () => ({ bytes: png(64, 64, false), contentType: 'image/png' }),
  jpg: () => ({ bytes: jpg(64, 64), contentType: 'image/jpeg' }),
  jpeg: () => ({ bytes: jpg(64, 64), contentType: 'image/jpeg' }),
  mp4: () => ({ bytes: mp4(), contentType: 'video/mp4' }),
  wav: () => ({ bytes: wav(2), contentType: 'audio/wav' }),
  safetensors: () => ({ bytes: safetensors(), contentType: 'application/octet-stream' }),
};

export class ReferenceHost {
  private readonly media = defaultMedia();
  /** `anyPath`: a path not set serves the default medium of its extension (BY_EXTENSION) instead of 404. */
  constructor(private readonly options: { anyPath?: boolean } = {}) {}
  private readonly fetches = new Map<string, number>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer(loopbackTls(), (request, response) => this.handle(request, response));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The absolute URL of a hosted path (e.g. `/image.png`). */
  urlOf(path: string): string {
    return `${this.url}${path}`;
  }

  /** Serves `bytes` at `path` from now on (adds a path, or swaps what an existing one serves). */
  serve(path: string, bytes: Buffer, contentType: string): void {
    this.media.set(path, { bytes, contentType });
  }

  /** The bytes a path serves now. */
  bytesOf(path: string): Buffer | undefined {
    return this.media.get(path)?.bytes;
  }

  /** How many GET requests reached `path`. */
  fetchCount(path: string): number {
    return this.fetches.get(path) ?? 0;
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', this.url);
    const extension = url.pathname.split('.').pop() ?? '';
    const hosted =
      this.media.get(url.pathname) ??
      (this.options.anyPath && Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension]() : undefined);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' });
      response.end();
      return;
    }
    if (!hosted) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not hosted');
      return;
    }
    if (request.method === 'GET') this.fetches.set(url.pathname, this.fetchCount(url.pathname) + 1);
    response.writeHead(200, { 'content-type': hosted.contentType, 'content-length': String(hosted.bytes.length) });
    response.end(request.method === 'HEAD' ? undefined : hosted.bytes);
  }
}
