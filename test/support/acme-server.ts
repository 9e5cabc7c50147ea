import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clipAskedBy } from '../../support/media/fixtures.js';
import { LoopbackServer, sendJson } from '../../support/upstreams/loopback-upstream.js';

/**
 * A loopback server for "Acme's render API", the example provider of issue 27's profile section
 * (written from that text, not from any profile): POST /v2/renders with a Bearer key and
 * `X-Acme-Version: 2025-01-01` answers `{status: {code, message}, render: {uid}}`; GET
 * /v2/renders/{uid} answers the render's `phase` (waiting, working, done, broken, stopped), its
 * `percent`, `problem` and `files[].href`; POST /v2/renders/{uid}/stop stops it; GET
 * /v2/renders/probe-0 is 404 (nothing created, key accepted). Business errors come in 200
 * answers: `status.code` 0 is success, 42 the engine is busy, 7 the request is refused.
 *
 * What a render does is chosen by its prompt, so one server plays every case:
 * "busy-at-<name>" / "refuse": the submit's 200 answer carries code 42 / 7; "broken": the render fails with
 * a problem; "stopped": Acme stops it on its own; "paused": a phase no profile maps; "slow": it
 * works until stopped; "throttle": the first status request is a 429 with Retry-After: 1;
 * "lost-answer": the render is made, then the connection is cut before the answer; "lost-submit":
 * the connection is cut and nothing is made.
 *
 * A submit may carry `reference`, an id the client chooses (issue 37's client-chosen id):
 * GET /v2/renders?reference=<it> answers that render as the status request does (404 when none).
 */
export interface AcmeRender {
  uid: string;
  body: Record<string, unknown>;
  polls: number;
  stopped: boolean;
}

const KEY = 'acme-key';
const VERSION = '2025-01-01';

export class AcmeServer extends LoopbackServer {
  readonly renders = new Map<string, AcmeRender>();
  readonly submits: Record<string, unknown>[] = [];
  readonly requests: string[] = [];

  static readonly key = KEY;

  /** `name` tells servers apart: a prompt with "busy-at-<name>" is busy at that one only. */
  constructor(private readonly options: { name?: string } = {}) {
    super();
  }

  protected handle(request: IncomingMessage, response: ServerResponse, url: URL, bytes: Buffer) {
    this.requests.push(`${request.method} ${url.pathname}`);
    if (request.method === 'GET' && url.pathname.startsWith('/files/')) {
      response.writeHead(200, { 'content-type': 'video/mp4' });
      // The frame the last submit asked for: the service checks the result against its request.
      response.end(clipAskedBy(this.submits.at(-1) ?? {}, 5));
      return;
    }
    if (request.headers.authorization !== `Bearer ${KEY}` || request.headers['x-acme-version'] !== VERSION)
      return sendJson(response, 401, { status: { code: 401, message: 'missing or wrong key or version' } });
    if (request.method === 'GET' && url.pathname === '/v2/renders/probe-0')
      return sendJson(response, 404, { status: { code: 404, message: 'no such render' } });
    if (request.method === 'POST' && url.pathname === '/v2/renders') {
      const body = JSON.parse(bytes.toString('utf8') || '{}') as Record<string, unknown>;
      this.submits.push(body);
      const text = String(body.text ?? '');
      if (text.includes(`busy-at-${this.options.name ?? ''}`))
        return sendJson(response, 200, { status: { code: 42, message: 'engine busy' } });
      if (text.includes('refuse'))
        return sendJson(response, 200, { status: { code: 7, message: 'The prompt is not allowed.' } });
      if (text.includes('lost-submit')) return void request.socket.destroy();
      const uid = `r-${randomUUID()}`;
      this.renders.set(uid, { uid, body, polls: 0, stopped: false });
      if (text.includes('lost-answer')) return void request.socket.destroy();
      return sendJson(response, 200, { status: { code: 0 }, render: { uid } });
    }
    if (request.method === 'GET' && url.pathname === '/v2/renders' && url.searchParams.has('reference')) {
      const reference = url.searchParams.get('reference');
      const found = [...this.renders.values()].find((r) => r.body.reference === reference);
      if (!found) return sendJson(response, 404, { status: { code: 404, message: 'no such render' } });
      return sendJson(response, 200, { status: { code: 0 }, render: { uid: found.uid, phase: 'waiting' } });
    }
    const match = /^\/v2\/renders\/([^/]+)(\/stop)?$/.exec(url.pathname);
    const render = match ? this.renders.get(match[1]) : undefined;
    if (!render) return sendJson(response, 404, { status: { code: 404, message: 'no such render' } });
    if (request.method === 'POST' && match?.[2]) {
      render.stopped = true;
      return sendJson(response, 200, { status: { code: 0 } });
    }
    if (request.method !== 'GET' || match?.[2]) return sendJson(response, 405, { status: { code: 405 } });
    render.polls++;
    const text = String(render.body.text ?? '');
    if (text.includes('throttle') && render.polls === 1)
      return sendJson(response, 429, { status: { code: 429, message: 'slow down' } }, { 'retry-after': '1' });
    const phase = (value: string, extra: Record<string, unknown> = {}) =>
      sendJson(response, 200, { status: { code: 0 }, render: { uid: render.uid, phase: value, ...extra } });
    if (render.stopped) return phase('stopped');
    if (render.polls === 1) return phase('waiting');
    if (text.includes('paused')) return phase('paused');
    if (text.includes('slow')) return phase('working', { percent: 10 });
    if (render.polls === 2) return phase('working', { percent: 50 });
    if (text.includes('broken')) return phase('broken', { problem: 'The render crashed on frame 12.' });
    if (text.includes('stopped')) return phase('stopped');
    return phase('done', { percent: 100, files: [{ href: `${this.url}/files/${render.uid}.mp4` }] });
  }
}
