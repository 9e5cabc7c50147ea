import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Special,
  QueuedCancelServer,
  linkAlive,
  phaseOf,
  sendClip,
  sendJson,
  sendSpecial,
  type TimelineJob,
  type TimelineOptions,
} from '../loopback-upstream.js';

/**
 * A loopback server speaking BytePlus ModelArk / Volcengine Ark's content generation tasks API
 * (Seedance) as the vendor publishes it, written from that protocol, not from
 * spec/providers/ark.yaml. Sources:
 * - github:volcengine/volcengine-python-sdk volcenginesdkarkruntime/resources/content_generation/
 *   tasks.py and types/content_generation/ (create_task_content_param.py: content items
 *   { type: text, text } | { type: image_url, image_url: { url }, role }; content_generation_task.py:
 *   id, model, status, content.video_url, usage.completion_tokens, created_at, updated_at);
 * - Ark's "Create a video generation task" / "Query" / "Cancel or delete" API references
 *   (volcengine.com/docs/82379/1520757, 1521309, 1521720; docs.byteplus.com ModelArk): POST
 *   /api/v3/contents/generations/tasks { model, content[], ratio, resolution, duration, seed,
 *   watermark, generate_audio, return_last_frame, callback_url, execution_expires_after (seconds,
 *   3600..259200, default 172800: the task expires when it has not ended by then) } -> { id };
 *   GET .../tasks/{id}: queued, running, succeeded, failed (error { code, message }), cancelled,
 *   expired; content.video_url valid for 24 hours; DELETE .../tasks/{id}: a queued task is
 *   cancelled, a running one cannot be, an ended one is deleted from the list;
 * - Ark's error codes page (error { code, message, param, type }: AuthenticationError 401,
 *   InvalidParameter 400, InputTextSensitiveContentDetected 400, RateLimitExceeded 429 /
 *   ServerOverloaded 429, OutputVideoSensitiveContentDetected at poll time: the output is moderated
 *   after the job ran).
 * The exact error code for a DELETE of a running task is not in the pages read; the one below is
 * Ark's generic InvalidParameter shape with the documented rule as its message.
 */
export interface ArkServerOptions extends TimelineOptions {
  /** The key a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** The answer to the index-th create instead of creating. */
  submit?: (index: number, body: Record<string, unknown>) => Special;
  /** A task whose text content contains this fails after running: its output moderated (OutputVideoSensitiveContentDetected). */
  failWhenPromptContains?: string;
}

export interface ArkReceived {
  authorization: string | undefined;
  body: {
    model?: string;
    content?: { type: string; text?: string; role?: string; [k: string]: unknown }[];
    execution_expires_after?: number;
    [k: string]: unknown;
  };
}

interface ArkTask extends TimelineJob {
  body: ArkReceived['body'];
  requestId: string;
}

/** An Ark error answer. */
export function arkError(status: number, code: string, message: string, type: string, retryAfter?: string): Special {
  return { status, body: { error: { code, message, param: '', type } }, ...(retryAfter ? { retryAfter } : {}) };
}

const requestId = () => `0217${Date.now()}${randomBytes(8).toString('hex')}`;

/** Ark's DELETE cancels a queued task; it refuses a running one. */
export class ArkServer extends QueuedCancelServer<ArkReceived, ArkTask> {
  /** Task list requests (a probe asks one). */
  lists = 0;

  constructor(private readonly options: ArkServerOptions = {}) {
    super();
  }

  /** The base URL an operator configures (Ark's `/api/v3`). */
  get baseUrl(): string {
    return `${this.url}/api/v3`;
  }

  private prompt(task: ArkTask): string {
    return (task.body.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join(' ');
  }

  private status(task: ArkTask): string {
    const phase = phaseOf(task, this.options);
    if (phase === 'canceled') return 'cancelled';
    const expiresAt = task.createdAt + (task.body.execution_expires_after ?? 172_800) * 1000;
    if (phase !== 'ended' && Date.now() >= expiresAt) return 'expired';
    if (phase === 'queued') return 'queued';
    if (phase === 'running') return 'running';
    const trigger = this.options.failWhenPromptContains;
    return trigger !== undefined && this.prompt(task).includes(trigger) ? 'failed' : 'succeeded';
  }

  private unauthorized(request: IncomingMessage, response: ServerResponse): boolean {
    if (this.options.apiKey === undefined || request.headers.authorization === `Bearer ${this.options.apiKey}`)
      return false;
    sendSpecial(
      request,
      response,
      arkError(
        401,
        'AuthenticationError',
        `The API key in the request is missing or invalid. Request id: ${requestId()}`,
        'Unauthorized',
      ),
    );
    return true;
  }

  protected handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer) {
    const download = /^\/tos\/([^/]+)\.mp4$/.exec(url.pathname);
    if (download) return this.download(response, this.tasks.get(download[1]));
    if (request.method === 'POST' && url.pathname === '/api/v3/contents/generations/tasks')
      return this.create(request, response, raw);
    if (this.unauthorized(request, response)) return;
    // The task list (ListContentGenerationTasks; the SDK's content_generation.tasks.list): newest first, page_num from 1.
    if (request.method === 'GET' && url.pathname === '/api/v3/contents/generations/tasks') {
      this.lists++;
      const size = Math.max(1, Number(url.searchParams.get('page_size') ?? 10) || 10);
      const page = Math.max(1, Number(url.searchParams.get('page_num') ?? 1) || 1);
      const all = [...this.tasks.values()].reverse();
      return sendJson(response, 200, {
        items: all.slice((page - 1) * size, page * size).map((task) => this.object(task)),
        total: all.length,
      });
    }
    const one = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(url.pathname);
    const task = one ? this.tasks.get(one[1]) : undefined;
    if (!one || !task)
      return sendSpecial(
        request,
        response,
        arkError(404, 'ResourceNotFound', 'The specified task is not found.', 'NotFound'),
      );
    if (request.method === 'GET') {
      this.polls++;
      return sendJson(response, 200, this.object(task));
    }
    if (request.method === 'DELETE') {
      const status = this.status(task);
      if (status === 'queued') {
        task.canceledAt = Date.now();
        this.cancels.push(task.id);
        return sendJson(response, 200, {});
      }
      if (status === 'running') {
        this.refusedCancels.push(task.id);
        return sendSpecial(
          request,
          response,
          arkError(400, 'InvalidParameter', 'A running task cannot be cancelled or deleted.', 'BadRequest'),
        );
      }
      this.tasks.delete(task.id);
      return sendJson(response, 200, {});
    }
    sendJson(response, 405, {});
  }

  private object(task: ArkTask) {
    const status = this.status(task);
    const seconds = Math.floor(task.createdAt / 1000);
    return {
      id: task.id,
      model: task.body.model,
      status,
      ...(status === 'failed'
        ? {
            error: {
              code: 'OutputVideoSensitiveContentDetected',
              message: `The request failed because the output video may contain sensitive information. Request id: ${task.requestId}`,
            },
          }
        : {}),
      created_at: seconds,
      updated_at: Math.floor(Date.now() / 1000),
      ...(status === 'succeeded'
        ? {
            content: {
              video_url: `${this.url}/tos/${task.id}.mp4?X-Tos-Expires=86400&X-Tos-Signature=x`,
            },
            usage: { completion_tokens: 108_900, total_tokens: 108_900 },
          }
        : {}),
      seed: 11,
      resolution: task.body.resolution ?? '720p',
      ratio: task.body.ratio ?? '16:9',
      duration: task.body.duration ?? 5,
      framespersecond: 24,
      execution_expires_after: task.body.execution_expires_after ?? 172_800,
    };
  }

  private create(request: IncomingMessage, response: ServerResponse, raw: Buffer) {
    const index = this.submits.length;
    const body = JSON.parse(raw.toString('utf8') || '{}') as ArkReceived['body'];
    this.submits.push({ authorization: request.headers.authorization, body });
    if (this.unauthorized(request, response)) return;
    if (sendSpecial(request, response, this.options.submit?.(index, body))) return;
    const invalid = (param: string) =>
      sendSpecial(
        request,
        response,
        arkError(
          400,
          'InvalidParameter',
          `The parameter \`${param}\` specified in the request is not valid. Request id: ${requestId()}`,
          'BadRequest',
        ),
      );
    if (typeof body.model !== 'string') return invalid('model');
    const content = body.content;
    if (!Array.isArray(content) || content.length === 0) return invalid('content');
    for (const item of content) {
      const ok =
        (item.type === 'text' && typeof item.text === 'string') ||
        (item.type === 'image_url' &&
          typeof (item.image_url as { url?: unknown } | undefined)?.url === 'string' &&
          (item.role === undefined || ['first_frame', 'last_frame', 'reference_image'].includes(item.role))) ||
        (item.type === 'video_url' && typeof (item.video_url as { url?: unknown } | undefined)?.url === 'string') ||
        (item.type === 'audio_url' && typeof (item.audio_url as { url?: unknown } | undefined)?.url === 'string');
      if (!ok) return invalid('content');
    }
    const expires = body.execution_expires_after;
    if (expires !== undefined && (!Number.isInteger(expires) || expires < 3600 || expires > 259_200))
      return invalid('execution_expires_after');
    const id = `cgt-${new Date().toISOString().slice(0, 10).replaceAll('-', '')}${randomBytes(6).toString('hex')}`;
    this.tasks.set(id, { id, createdAt: Date.now(), body, requestId: requestId() });
    sendJson(response, 200, { id });
  }

  /** The TOS link: the file while it lives (24 h), then 403. */
  private download(response: ServerResponse, task: ArkTask | undefined) {
    if (!task || this.status(task) !== 'succeeded' || !linkAlive(task, this.options)) {
      response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    this.downloads++;
    sendClip(response, Number(task.body.duration ?? 5), task.body);
  }
}
