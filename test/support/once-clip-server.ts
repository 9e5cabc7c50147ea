import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loopbackTls } from '../../support/loopback-tls.js';
import { clip } from '../../support/media/fixtures.js';

/**
 * A hostile reference host: an https loopback listener (the fixture certificate of support/tls,
 * trusted through NODE_EXTRA_CA_CERTS) that serves a real clip of `seconds` to its first
 * `answers` requests and 404 to every later one, the way a caller's link can answer the provider
 * and vanish before the service looks at it. Every request is counted, and named in `log` (shared
 * with the upstream server of the test, so the order of clip reads and submits can be read back).
 */
export class OnceClipServer {
  requests = 0;
  private server!: Server;
  url = '';

  constructor(private readonly options: { seconds: number; answers: number; log?: string[] }) {}

  async start(): Promise<this> {
    const bytes = clip(this.options.seconds);
    this.server = createServer(loopbackTls(), (_request, response) => {
      this.requests++;
      const answered = this.requests <= this.options.answers;
      this.options.log?.push(answered ? 'clip answered' : 'clip 404');
      if (!answered) return void response.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) }).end(bytes);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/clip.mp4`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
