import type { IncomingMessage, ServerResponse } from 'node:http';
import { type GenerationClock, type SubmitOverride, type VendorJob, VendorServer } from './vendor-server.js';

/**
 * A loopback server speaking Luma's Dream Machine API as Luma publishes it, written from that API
 * and not from the profile. Sources: github:lumalabs/lumaai-node src/index.ts (Bearer auth token,
 * base https://api.lumalabs.ai/dream-machine/v1), src/resources/generations/generations.ts
 * (POST /generations/video with { model: ray-2 | ray-flash-2, prompt, aspect_ratio, duration "5s" |
 * "9s", resolution, loop, keyframes { frame0, frame1: { type: image, url } }, callback_url }
 * answering the Generation; GET /generations/{id}: `state` queued | dreaming | completed | failed,
 * `failure_reason`, `assets.video`; GET /generations { limit, offset } lists the key's generations
 * ({ generations, has_more, count, limit, offset }; each Generation echoes its `request`, `model`
 * and `created_at`; the SDK does not say the order: this server lists the newest first); DELETE /generations/{id} removes a generation: Luma has no cancel
 * of a running one, and a removed generation is gone: 404 after; `callback_url`: "a POST request
 * with Generation object will be sent to the callback URL when the generation is dreaming,
 * completed, or failed"). Errors carry { detail } (this server's reading of Luma's answers: the
 * SDK does not type error bodies).
 * Luma puts no error in a 2xx body.
 */
export interface LumaServerOptions extends GenerationClock {
  /** The key a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** A generation whose prompt contains this fails (state failed, failure_reason). */
  failWhenPromptContains?: string;
  /** The answer to the n-th submit instead of creating a generation. */
  submit?: (index: number, body: Record<string, unknown>) => SubmitOverride;
  /** How long assets.video answers after the generation completed (default 24 h). */
  outputLifetimeMs?: number;
}

const MODELS = ['ray-2', 'ray-flash-2', 'ray-1-6'];
const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'];

export class LumaServer extends VendorServer {
  /** The callbacks this server POSTed (the generation's state in each) and the status each got. */
  readonly callbacks: { url: string; state: string; status: number }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: LumaServerOptions = {}) {
    super(options);
  }

  override async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await super.close();
  }

  /** As Luma does with callback_url: the Generation POSTed when it starts dreaming and when it ends. */
  private callBack(job: VendorJob, url: string): void {
    const clock = this.clockOf(job);
    const latency = clock.latencyMs ?? 300;
    const queued = clock.queuedMs ?? latency / 5;
    for (const at of [queued + 5, latency + 5]) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        const generation = this.generation(job);
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(generation),
        })
          .then((r) => this.callbacks.push({ url, state: generation.state, status: r.status }))
          .catch(() => this.callbacks.push({ url, state: generation.state, status: 0 }));
      }, at);
      this.timers.add(timer);
    }
  }

  get baseUrl(): string {
    return `${this.url}/dream-machine/v1`;
  }

  private detail(response: ServerResponse, status: number, detail: string): void {
    this.json(response, status, { detail });
  }

  protected async route(request: IncomingMessage, url: URL, raw: Buffer, response: ServerResponse): Promise<void> {
    const body = this.parse(raw);
    const isSubmit = request.method === 'POST' && /^\/dream-machine\/v1\/generations(\/video)?$/.test(url.pathname);
    if (isSubmit) this.record(request, url, body ?? {});
    const key = this.options.apiKey;
    if (key !== undefined && request.headers.authorization !== `Bearer ${key}`)
      return this.detail(response, 401, 'Invalid API key');
    if (isSubmit) return this.submitGeneration(request, url, body, response);
    if (request.method === 'GET' && url.pathname === '/dream-machine/v1/generations') return this.list(url, response);
    const one = /^\/dream-machine\/v1\/generations\/([^/]+)$/.exec(url.pathname);
    const job = one ? this.jobs.get(one[1]) : undefined;
    if (!one || !job || job.deleted) return this.detail(response, 404, 'Generation not found');
    if (request.method === 'GET') {
      this.polls++;
      return this.json(response, 200, this.generation(job));
    }
    if (request.method === 'DELETE') {
      job.deleted = true;
      response.writeHead(204).end();
      return;
    }
    this.detail(response, 405, 'Method Not Allowed');
  }

  private submitGeneration(
    request: IncomingMessage,
    url: URL,
    body: Record<string, unknown> | undefined,
    response: ServerResponse,
  ) {
    if (!body) return this.detail(response, 400, 'Invalid JSON');
    const create = () => this.create(this.newId(), url.pathname, body);
    if (this.override(this.options.submit?.(this.submits.length - 1, body), request, response, create)) return;
    if (!MODELS.includes(String(body.model))) return this.detail(response, 400, `Invalid model: ${String(body.model)}`);
    if (body.aspect_ratio !== undefined && !RATIOS.includes(String(body.aspect_ratio)))
      return this.detail(response, 400, `Invalid aspect ratio: ${String(body.aspect_ratio)}`);
    if (body.duration !== undefined && !/^\d+s$/.test(String(body.duration)))
      return this.detail(response, 400, `Invalid duration: ${String(body.duration)}`);
    const frames = (body.keyframes ?? {}) as Record<string, { type?: string; url?: string }>;
    for (const [name, frame] of Object.entries(frames))
      if (!['frame0', 'frame1'].includes(name) || frame?.type !== 'image' || typeof frame.url !== 'string')
        return this.detail(response, 400, `Invalid keyframe: ${name}`);
    if (typeof body.prompt !== 'string' && Object.keys(frames).length === 0)
      return this.detail(response, 400, 'Prompt is required');
    const job = create();
    if (typeof body.callback_url === 'string') this.callBack(job, body.callback_url);
    this.json(response, 201, this.generation(job));
  }

  /** GET /generations: a page of the key's generations (deleted ones gone), newest first. */
  private list(url: URL, response: ServerResponse): void {
    this.lists++;
    const limit = Math.max(1, Math.min(100, Number(url.searchParams.get('limit') ?? 10) || 10));
    const offset = Math.max(0, Number(url.searchParams.get('offset') ?? 0) || 0);
    const all = [...this.jobs.values()].filter((job) => !job.deleted).sort((a, b) => b.createdAt - a.createdAt);
    const page = all.slice(offset, offset + limit).map((job) => this.generation(job));
    this.json(response, 200, {
      generations: page,
      has_more: offset + limit < all.length,
      count: page.length,
      limit,
      offset,
    });
  }

  private generation(job: VendorJob) {
    const phase = this.phase(job);
    const trigger = this.options.failWhenPromptContains;
    const failed = phase === 'ended' && trigger !== undefined && String(job.body.prompt ?? '').includes(trigger);
    const state = phase === 'queued' ? 'queued' : phase === 'running' ? 'dreaming' : failed ? 'failed' : 'completed';
    return {
      id: job.id,
      generation_type: 'video',
      state,
      failure_reason: failed
        ? `400: prompt not allowed because advanced moderation failed (generation ${job.id})`
        : null,
      created_at: new Date(job.createdAt).toISOString(),
      model: job.body.model,
      assets: state === 'completed' ? { video: this.mediaUrl(job), image: null, progress_video: null } : null,
      request: job.body,
    };
  }
}
