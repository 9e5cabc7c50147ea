import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type GenerationClock, type SubmitOverride, type VendorJob, VendorServer } from './vendor-server.js';

/**
 * A loopback server speaking Kling's API as Kling publishes it (the "Kling AI API Specification",
 * General Information and Video Generation chapters: https://app.klingai.com/global/dev/document-api,
 * mirrored at docs.qingque.cn/d/home/eZQCQxBrX8eeImjK6Ddz5iOi5), written from that API and not
 * from the profile:
 * - auth: `Authorization: Bearer <JWT>`, HS256, header { alg: HS256, typ: JWT }, claims iss = the
 *   access key, exp, nbf, signed with the secret key. Refused with 401 and service code 1000
 *   (wrong signature or unknown key), 1001 (empty), 1002 (malformed), 1003 (not yet valid: nbf),
 *   1004 (expired: exp);
 * - POST /v1/videos/text2video and /v1/videos/image2video (model_name, prompt, negative_prompt,
 *   cfg_scale, mode std | pro, aspect_ratio, duration "5" | "10", image, image_tail, callback_url,
 *   external_task_id): { code: 0, message: "SUCCEED", request_id, data: { task_id, task_status:
 *   submitted, task_info: { external_task_id }, created_at, updated_at } }; an external_task_id
 *   already used is refused (1201);
 * - GET /v1/videos/{action}/{id}, where id is the task_id or the external_task_id: task_status
 *   submitted | processing | succeed | failed, task_status_msg, task_result.videos[{ id, url,
 *   duration }] (generated videos are cleared after 30 days);
 * - every answer is the { code, message, request_id, data } envelope; the service codes of the
 *   error table: 1100-1103 account (429/403), 1200-1203 request (400/404), 1300-1304 policy
 *   (400/429: 1301 content security, 1302 rate limit, 1303 concurrency), 5000-5002 server
 *   (500/503/504); the messages of 1000-1102 are the table's, the others paraphrased. Kling has
 *   no cancel.
 * `envelopeIn200` answers those envelopes with HTTP 200, as Kling's gateways and relays in front of
 * it do: the body's `code` is then the only sign of the failure.
 */
export interface KlingServerOptions extends GenerationClock {
  accessKey?: string;
  secretKey?: string;
  /** A task whose prompt contains this fails (task_status failed, task_status_msg). */
  failWhenPromptContains?: string;
  /** The answer to the n-th submit instead of creating a task (see `envelope` for Kling's bodies). */
  submit?: (index: number, body: Record<string, unknown>) => SubmitOverride;
  /** The answer to the n-th status query of a known task instead of the task (Kling's envelopes: `envelope`). */
  poll?: (index: number) => SubmitOverride;
  /** Error envelopes answer HTTP 200 (the code in the body is the failure). */
  envelopeIn200?: boolean;
  /** A careless relay: a submit is refused (1201) with the Authorization header it carried written into the message. */
  echoAuthorization?: boolean;
  /** A careless gateway: every request is refused 401 (1000) with the Authorization header it carried written into the message. */
  echoAuthorizationUnauthorized?: boolean;
  /** How long a video link answers after the task succeeded (default 30 days). */
  outputLifetimeMs?: number;
}

/** Kling's error envelope with its HTTP status, as the specification's error table pairs them. */
export const KLING_ERRORS = {
  unauthorized: { status: 401, code: 1000, message: 'Authentication failed' },
  empty: { status: 401, code: 1001, message: 'Authorization is empty' },
  malformed: { status: 401, code: 1002, message: 'Authorization is invalid' },
  notYetValid: { status: 401, code: 1003, message: 'Authorization is not yet valid' },
  expired: { status: 401, code: 1004, message: 'Authorization has expired' },
  balance: { status: 429, code: 1102, message: 'Resource pack depleted or expired' },
  invalidParameter: { status: 400, code: 1201, message: 'Invalid request parameters' },
  notFound: { status: 404, code: 1203, message: 'Requested resource does not exist' },
  contentSecurity: { status: 400, code: 1301, message: 'Trigger the content security policy of the platform' },
  rateLimit: { status: 429, code: 1302, message: 'The API request is too fast, please slow down the request rate' },
  concurrency: { status: 429, code: 1303, message: 'Concurrency or QPS exceeds the prepaid resource package limit' },
  internal: { status: 500, code: 5000, message: 'Server internal error' },
} as const;

export type KlingError = keyof typeof KLING_ERRORS;

const requestId = () => randomUUID();

export class KlingServer extends VendorServer {
  /** The JWT claims of every request that passed (a test checks what the service signed). */
  readonly tokens: Record<string, unknown>[] = [];
  /** Status queries of known tasks, those answered by `poll` too. */
  pollAnswers = 0;

  constructor(private readonly options: KlingServerOptions = {}) {
    super({ outputLifetimeMs: 30 * 86_400_000, ...options });
  }

  get baseUrl(): string {
    return this.url;
  }

  /** Kling's error envelope for one of its service codes, with the HTTP status it goes with. */
  envelope(error: KlingError, message?: string): { status: number; body: unknown } {
    const e = KLING_ERRORS[error];
    return {
      status: this.options.envelopeIn200 ? 200 : e.status,
      body: { code: e.code, message: message ?? e.message, request_id: requestId() },
    };
  }

  private refuse(response: ServerResponse, error: KlingError, message?: string): void {
    const { status, body } = this.envelope(error, message);
    this.json(response, status, body);
  }

  /** The JWT check, as Kling's General Information chapter describes it: undefined when it passes. */
  private authError(header: string | undefined): KlingError | undefined {
    if (!header) return 'empty';
    const match = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(header);
    if (!match) return 'malformed';
    const [, head, payload, signature] = match;
    let claims: { iss?: unknown; exp?: unknown; nbf?: unknown };
    let alg: unknown;
    try {
      alg = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')).alg;
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return 'malformed';
    }
    if (alg !== 'HS256') return 'malformed';
    const access = this.options.accessKey;
    const secret = this.options.secretKey;
    if (access === undefined || secret === undefined) return undefined;
    if (claims.iss !== access) return 'unauthorized';
    const expected = createHmac('sha256', secret).update(`${head}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'unauthorized';
    const now = Date.now() / 1000;
    if (typeof claims.exp !== 'number' || claims.exp <= now) return 'expired';
    if (typeof claims.nbf === 'number' && claims.nbf > now) return 'notYetValid';
    this.tokens.push(claims as Record<string, unknown>);
    return undefined;
  }

  protected async route(request: IncomingMessage, url: URL, raw: Buffer, response: ServerResponse): Promise<void> {
    const body = this.parse(raw);
    const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(url.pathname);
    if (request.method === 'POST' && submit) this.record(request, url, body ?? {});
    if (this.options.echoAuthorizationUnauthorized)
      return this.refuse(response, 'unauthorized', `Authentication failed: ${request.headers.authorization}`);
    const refused = this.authError(request.headers.authorization);
    if (refused) return this.refuse(response, refused);
    if (request.method === 'POST' && submit) return this.submitTask(request, url, submit[1], body, response);
    // Query Task (List): the tasks of an action, newest first, pageNum from 1, pageSize up to 500.
    if (request.method === 'GET' && submit) {
      this.lists++;
      const size = Math.min(500, Math.max(1, Number(url.searchParams.get('pageSize') ?? 30) || 30));
      const page = Math.max(1, Number(url.searchParams.get('pageNum') ?? 1) || 1);
      const all = [...this.jobs.values()].filter((job) => job.path.endsWith(`/${submit[1]}`)).reverse();
      const data = all.slice((page - 1) * size, page * size).map((job) => this.task(job));
      return this.json(response, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data });
    }
    const query = /^\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(url.pathname);
    if (request.method !== 'GET' || !query) return this.refuse(response, 'notFound', 'Invalid request method or path');
    const job = this.find(query[1], query[2]);
    if (!job) return this.refuse(response, 'notFound', 'task not found');
    if (this.override(this.options.poll?.(this.pollAnswers++), request, response, () => {})) return;
    this.polls++;
    this.json(response, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data: this.task(job) });
  }

  /** A task by its task_id or its external_task_id, under the action it was created by. */
  private find(action: string, id: string): VendorJob | undefined {
    const byId = this.jobs.get(id);
    const job = byId ?? [...this.jobs.values()].find((j) => j.body.external_task_id === id);
    return job?.path.endsWith(`/${action}`) ? job : undefined;
  }

  private submitTask(
    request: IncomingMessage,
    url: URL,
    action: string,
    body: Record<string, unknown> | undefined,
    response: ServerResponse,
  ) {
    if (!body) return this.refuse(response, 'invalidParameter', 'Invalid request parameters: body is not JSON');
    const create = () => this.create(String(800_000_000_000_000_000n + BigInt(this.jobs.size)), url.pathname, body);
    if (this.override(this.options.submit?.(this.submits.length - 1, body), request, response, create)) return;
    if (this.options.echoAuthorization)
      return this.refuse(
        response,
        'invalidParameter',
        `Invalid request parameters: ${request.headers.authorization} for ${body.prompt}`,
      );
    const external = body.external_task_id;
    if (external !== undefined && [...this.jobs.values()].some((j) => j.body.external_task_id === external))
      return this.refuse(response, 'invalidParameter', 'external_task_id already exists');
    if (body.duration !== undefined && !['5', '10'].includes(String(body.duration)))
      return this.refuse(response, 'invalidParameter', 'Invalid request parameters: duration must be 5 or 10');
    if (body.mode !== undefined && !['std', 'pro'].includes(String(body.mode)))
      return this.refuse(response, 'invalidParameter', 'Invalid request parameters: mode must be std or pro');
    if (action === 'text2video' && (typeof body.prompt !== 'string' || body.prompt === ''))
      return this.refuse(response, 'invalidParameter', 'Invalid request parameters: prompt is required');
    if (action === 'image2video' && typeof body.image !== 'string')
      return this.refuse(response, 'invalidParameter', 'Invalid request parameters: image is required');
    const job = create();
    this.json(response, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data: this.task(job) });
  }

  private task(job: VendorJob) {
    const phase = this.phase(job);
    const trigger = this.options.failWhenPromptContains;
    const failed = phase === 'ended' && trigger !== undefined && String(job.body.prompt ?? '').includes(trigger);
    const status =
      phase === 'queued' ? 'submitted' : phase === 'running' ? 'processing' : failed ? 'failed' : 'succeed';
    return {
      task_id: job.id,
      task_status: status,
      ...(failed ? { task_status_msg: `Failure to pass the risk control system (task ${job.id})` } : {}),
      task_info: job.body.external_task_id !== undefined ? { external_task_id: job.body.external_task_id } : {},
      created_at: job.createdAt,
      updated_at: Date.now(),
      ...(status === 'succeed'
        ? {
            task_result: {
              videos: [{ id: `${job.id}-0`, url: this.mediaUrl(job), duration: String(job.body.duration ?? '5') }],
            },
          }
        : {}),
    };
  }
}

/** A Kling API token, signed as Kling's General Information chapter shows (for tests of the server itself and of refusals). */
export function klingToken(accessKey: string, secretKey: string, claims: { exp?: number; nbf?: number } = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ iss: accessKey, exp: now + 1800, nbf: now - 5, ...claims })).toString(
    'base64url',
  );
  const signature = createHmac('sha256', secretKey).update(`${head}.${payload}`).digest('base64url');
  return `${head}.${payload}.${signature}`;
}
