import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clipAskedBy } from '../../support/media/fixtures.js';
import { LoopbackServer, sendJson } from '../../support/upstreams/loopback-upstream.js';

/**
 * "Acme Studio", a second fictional provider for the profile pieces beyond issue 27's example
 * (written from this description, not from any profile): every request carries an HS256 JSON Web
 * Token (RFC 7519: `iss` the access key, valid between `nbf` and `exp`, signed with the secret
 * key) as Bearer, else 401 with code 1002; POST /v1/studio/text or /v1/studio/image takes
 * `{model, content: [{type: text|image_url, ...}], expires_after (3600..7200), ref}` and answers
 * `{code: 0, data: {job_id}}` (a `ref` already used: code 1409 in a 200 answer); GET
 * /v1/studio/{text|image}/{job_id or ref} answers `data.status` pending, then ended (with
 * `file_id` when it made a file, with `error` when not); GET /v1/files/{file_id} answers the
 * file's `download_url`; GET /v1/studio/ping answers 200.
 *
 * Chosen by the prompt: "broken" ends without a file; "reset" reads the first submit, creates the
 * job and drops the connection before answering (the service cannot know the job exists).
 */
export interface StudioJob {
  id: string;
  path: string;
  body: Record<string, unknown>;
  polls: number;
}

export const STUDIO_ACCESS = 'studio-access';
export const STUDIO_SECRET = 'studio-secret';

/** Whether an Authorization header holds a token this server issued the keys for, now valid. */
function tokenValid(header: string | undefined): boolean {
  const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
  const [head, payload, signature] = token?.split('.') ?? [];
  if (!head || !payload || !signature) return false;
  const expected = createHmac('sha256', STUDIO_SECRET).update(`${head}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  const header_ = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string; typ?: string };
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    iss?: string;
    exp?: number;
    nbf?: number;
  };
  const now = Date.now() / 1000;
  return (
    header_.alg === 'HS256' &&
    header_.typ === 'JWT' &&
    claims.iss === STUDIO_ACCESS &&
    typeof claims.exp === 'number' &&
    claims.exp > now &&
    typeof claims.nbf === 'number' &&
    claims.nbf <= now
  );
}

export class AcmeStudioServer extends LoopbackServer {
  readonly jobs = new Map<string, StudioJob>();
  readonly requests: string[] = [];

  protected handle(request: IncomingMessage, response: ServerResponse, url: URL, bytes: Buffer) {
    this.requests.push(`${request.method} ${url.pathname}`);
    if (url.pathname.startsWith('/media/')) {
      response.writeHead(200, { 'content-type': 'video/mp4' });
      // The frame the last job asked for: the service checks the result against its request.
      response.end(clipAskedBy([...this.jobs.values()].at(-1)?.body ?? {}, 5));
      return;
    }
    if (!tokenValid(request.headers.authorization))
      return sendJson(response, 401, { code: 1002, message: 'token invalid or expired' });
    if (url.pathname === '/v1/studio/ping') return sendJson(response, 200, { code: 0 });
    const file = /^\/v1\/files\/([^/]+)$/.exec(url.pathname);
    if (file) return sendJson(response, 200, { code: 0, file: { download_url: `${this.url}/media/${file[1]}.mp4` } });
    const submit = /^\/v1\/studio\/(text|image)$/.exec(url.pathname);
    if (request.method === 'POST' && submit) {
      const body = JSON.parse(bytes.toString('utf8') || '{}') as Record<string, unknown>;
      if ([...this.jobs.values()].some((job) => job.body.ref === body.ref))
        return sendJson(response, 200, { code: 1409, message: 'a job with this ref exists' });
      const id = `job-${randomUUID()}`;
      this.jobs.set(id, { id, path: url.pathname, body, polls: 0 });
      if (JSON.stringify(body.content).includes('reset')) return request.socket.destroy();
      return sendJson(response, 200, { code: 0, data: { job_id: id } });
    }
    const poll = /^\/v1\/studio\/(text|image)\/([^/]+)$/.exec(url.pathname);
    const job = poll
      ? (this.jobs.get(poll[2]) ?? [...this.jobs.values()].find((j) => j.body.ref === poll[2]))
      : undefined;
    if (request.method !== 'GET' || !job) return sendJson(response, 404, { code: 1404, message: 'no such job' });
    job.polls++;
    if (job.polls === 1) return sendJson(response, 200, { code: 0, data: { job_id: job.id, status: 'pending' } });
    if (JSON.stringify(job.body.content).includes('broken'))
      return sendJson(response, 200, {
        code: 0,
        data: { job_id: job.id, status: 'ended', error: 'The studio could not render the scene.' },
      });
    return sendJson(response, 200, { code: 0, data: { job_id: job.id, status: 'ended', file_id: `f-${job.id}` } });
  }
}
