import { randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Special,
  LoopbackServer,
  clockOf,
  linkAlive,
  phaseOf,
  sendClip,
  sendJson,
  sendSpecial,
  type TimelineJob,
  type TimelineOptions,
} from '../loopback-upstream.js';

/**
 * A loopback server speaking MiniMax's video generation API (Hailuo) as MiniMax publishes it,
 * written from that protocol, not from spec/providers/minimax.yaml. Sources:
 * - https://platform.minimax.io/docs/api-reference/video/generation/api/openapi.json (POST
 *   /v1/video_generation, GET /v1/query/video_generation, GET /v1/files/retrieve, their schemas);
 * - https://platform.minimax.io/docs/api-reference/video-generation-download.md (files/retrieve:
 *   `file.download_url`);
 * - https://platform.minimax.io/docs/api-reference/errorcode.md (base_resp.status_code: 1002 rate
 *   limit, 1004 not authorized, 1008 insufficient balance, 1026 input sensitive, 1027 output
 *   sensitive, 2013 invalid params);
 * - github:MiniMax-AI/MiniMax-MCP-JS (the official client: Bearer key, create, query, retrieve).
 *
 * MiniMax answers HTTP 200 to almost everything and puts the outcome in `base_resp`
 * ({ status_code, status_msg }, 0 = success): a refused key, a rate limit or a refused prompt are
 * 200 answers whose body says so. The protocol:
 * - POST /v1/video_generation { model, prompt, first_frame_image?, duration?, resolution?,
 *   prompt_optimizer?, callback_url? } -> { task_id, base_resp };
 * - GET /v1/query/video_generation?task_id= -> { task_id, status: Preparing | Queueing |
 *   Processing | Success | Fail, file_id (on Success), video_width, video_height, base_resp };
 * - GET /v1/files/retrieve?file_id= -> { file: { file_id, bytes, created_at, filename, purpose,
 *   download_url }, base_resp }: the second request that turns a finished task into a link, which
 *   expires (options.resultLifetimeMs);
 * - no cancel: a task runs to its end.
 */
export interface MinimaxServerOptions extends TimelineOptions {
  /** The key a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** The answer to the index-th create instead of creating (a 200 with base_resp, a 429, a reset). */
  submit?: (index: number, body: Record<string, unknown>) => Special;
  /** A task whose prompt contains this ends `Fail` with 1027 (the output judged sensitive). */
  failWhenPromptContains?: string;
  /** The status value a poll reports while the task runs, instead of Processing (a value no profile maps). */
  runningStatus?: string;
}

export interface MinimaxReceived {
  authorization: string | undefined;
  body: Record<string, unknown>;
}

interface MinimaxTask extends TimelineJob {
  fileId: number;
  body: Record<string, unknown>;
}

const ok = { status_code: 0, status_msg: 'success' };

/** A 200 answer whose body says it failed, as MiniMax sends them. */
export function minimaxRefusal(status_code: number, status_msg: string): Special {
  return { status: 200, body: { task_id: '', base_resp: { status_code, status_msg } } };
}

export class MinimaxServer extends LoopbackServer {
  readonly submits: MinimaxReceived[] = [];
  readonly tasks = new Map<string, MinimaxTask>();
  /** GET /v1/query/video_generation answers given. */
  polls = 0;
  /** GET /v1/files/retrieve answers given with a link. */
  retrieves = 0;
  downloads = 0;
  /** Requests to paths MiniMax does not have (a cancel, say): method and path. */
  readonly strays: string[] = [];

  constructor(private readonly options: MinimaxServerOptions = {}) {
    super();
  }

  private status(task: MinimaxTask): { status: string; failed?: boolean } {
    const phase = phaseOf(task, this.options);
    if (phase === 'queued')
      return {
        status:
          Date.now() - task.createdAt < (clockOf(task, this.options).latencyMs ?? 200) * 0.1 ? 'Preparing' : 'Queueing',
      };
    if (phase === 'running') return { status: this.options.runningStatus ?? 'Processing' };
    const trigger = this.options.failWhenPromptContains;
    const failed = trigger !== undefined && String(task.body.prompt ?? '').includes(trigger);
    return failed ? { status: 'Fail', failed } : { status: 'Success' };
  }

  protected handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer) {
    const download = /^\/download\/(\d+)\.mp4$/.exec(url.pathname);
    if (download) return this.download(response, Number(download[1]));
    if (request.method === 'POST' && url.pathname === '/v1/video_generation')
      return this.create(request, response, raw);
    if (!this.authorized(request)) return this.loginFail(response);
    if (request.method === 'GET' && url.pathname === '/v1/query/video_generation') {
      const task = this.tasks.get(url.searchParams.get('task_id') ?? '');
      // An unknown task id: MiniMax answers 200 with an error in base_resp.
      if (!task) return sendJson(response, 200, { base_resp: { status_code: 2013, status_msg: 'invalid task_id' } });
      this.polls++;
      const { status, failed } = this.status(task);
      return sendJson(response, 200, {
        task_id: task.id,
        status,
        file_id: status === 'Success' ? String(task.fileId) : '',
        video_width: status === 'Success' ? 1366 : 0,
        video_height: status === 'Success' ? 768 : 0,
        base_resp: failed ? { status_code: 1027, status_msg: 'output video sensitive' } : ok,
      });
    }
    if (request.method === 'GET' && url.pathname === '/v1/files/retrieve') {
      const fileId = Number(url.searchParams.get('file_id'));
      const task = [...this.tasks.values()].find((t) => t.fileId === fileId);
      if (!task || this.status(task).status !== 'Success')
        return sendJson(response, 200, { base_resp: { status_code: 2013, status_msg: 'invalid file_id' } });
      this.retrieves++;
      return sendJson(response, 200, {
        file: {
          file_id: task.fileId,
          bytes: 0,
          created_at: Math.floor(task.createdAt / 1000),
          filename: 'output_aigc.mp4',
          purpose: 'video_generation',
          download_url: `${this.url}/download/${task.fileId}.mp4`,
        },
        base_resp: ok,
      });
    }
    this.strays.push(`${request.method} ${url.pathname}`);
    sendJson(response, 404, { base_resp: { status_code: 1000, status_msg: 'unknown error' } });
  }

  private authorized(request: IncomingMessage): boolean {
    return this.options.apiKey === undefined || request.headers.authorization === `Bearer ${this.options.apiKey}`;
  }

  private loginFail(response: ServerResponse) {
    sendJson(response, 200, {
      base_resp: {
        status_code: 1004,
        status_msg: "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
      },
    });
  }

  private create(request: IncomingMessage, response: ServerResponse, raw: Buffer) {
    const index = this.submits.length;
    const body = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
    this.submits.push({ authorization: request.headers.authorization, body });
    if (!this.authorized(request)) return this.loginFail(response);
    if (sendSpecial(request, response, this.options.submit?.(index, body))) return;
    if (
      typeof body.model !== 'string' ||
      (typeof body.prompt !== 'string' && typeof body.first_frame_image !== 'string')
    )
      return sendJson(response, 200, {
        task_id: '',
        base_resp: { status_code: 2013, status_msg: 'invalid params, model and prompt or first_frame_image required' },
      });
    // MiniMax-Hailuo-02: 6 or 10 seconds, 512P / 768P / 1080P (1080P: 6 s only).
    if (body.duration !== undefined && body.duration !== 6 && body.duration !== 10)
      return sendJson(response, 200, {
        task_id: '',
        base_resp: { status_code: 2013, status_msg: `invalid params, duration ${body.duration} is not supported` },
      });
    if (body.resolution !== undefined && !['512P', '768P', '1080P'].includes(String(body.resolution)))
      return sendJson(response, 200, {
        task_id: '',
        base_resp: { status_code: 2013, status_msg: `invalid params, resolution ${body.resolution} is not supported` },
      });
    const id = String(randomInt(10 ** 14, 2 * 10 ** 14));
    this.tasks.set(id, { id, createdAt: Date.now(), fileId: randomInt(10 ** 14, 2 * 10 ** 14), body });
    sendJson(response, 200, { task_id: id, base_resp: ok });
  }

  /** The download_url: the file while its link lives, then 403 (a signed link expired). */
  private download(response: ServerResponse, fileId: number) {
    const task = [...this.tasks.values()].find((t) => t.fileId === fileId);
    if (!task || this.status(task).status !== 'Success' || !linkAlive(task, this.options)) {
      response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    this.downloads++;
    sendClip(response, Number(task.body.duration ?? 6), task.body);
  }
}
