import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Special,
  QueuedCancelServer,
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
 * A loopback server speaking Alibaba Cloud Model Studio's DashScope video synthesis API (Wan) as
 * Alibaba publishes it, written from that protocol, not from spec/providers/dashscope.yaml.
 * Sources:
 * - github:dashscope/dashscope-sdk-python dashscope/aigc/video_synthesis.py (the task
 *   `video-generation`, function `video-synthesis`; `input` { prompt, negative_prompt, img_url,
 *   ... }, `parameters` { size | resolution, duration, seed, prompt_extend, watermark }) and
 *   dashscope/client/base_api.py (async call with `X-DashScope-Async: enable`, GET
 *   /api/v1/tasks/{task_id}, POST /api/v1/tasks/{task_id}/cancel);
 * - Model Studio's "Wan text-to-video / image-to-video API reference" (help.aliyun.com /
 *   alibabacloud.com/help/en/model-studio): task_status PENDING, RUNNING, SUSPENDED, SUCCEEDED,
 *   FAILED, CANCELED, UNKNOWN (UNKNOWN: the task does not exist or has expired, 24 h); video_url
 *   valid for 24 hours; error bodies { request_id, code, message } (InvalidApiKey 401,
 *   InvalidParameter 400, DataInspectionFailed 400, Throttling.RateQuota 429, AccessDenied 403 for
 *   a synchronous call of an asynchronous-only API); cancel honoured only while PENDING.
 * The protocol:
 * - POST /api/v1/services/aigc/video-generation/video-synthesis, `Authorization: Bearer ...`,
 *   `X-DashScope-Async: enable`, { model, input, parameters } -> { request_id, output: { task_id,
 *   task_status: PENDING } };
 * - GET /api/v1/tasks/{task_id} -> { request_id, output: { task_id, task_status, submit_time,
 *   scheduled_time, end_time, video_url | code + message }, usage };
 * - POST /api/v1/tasks/{task_id}/cancel -> { request_id } while PENDING, else 400
 *   UnsupportedOperation.
 */
export interface DashscopeServerOptions extends TimelineOptions {
  /** The key a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** The answer to the index-th create instead of creating. */
  submit?: (index: number, body: Record<string, unknown>) => Special;
  /** A task whose prompt contains this ends FAILED with DataInspectionFailed (the output judged inappropriate). */
  failWhenPromptContains?: string;
  /** While queued the task reports SUSPENDED (held back by the platform) instead of PENDING. */
  suspendWhileQueued?: boolean;
}

export interface DashscopeReceived {
  authorization: string | undefined;
  async: string | undefined;
  body: { model?: string; input?: Record<string, unknown>; parameters?: Record<string, unknown> };
}

interface DashscopeTask extends TimelineJob {
  body: DashscopeReceived['body'];
}

/** A DashScope error answer. */
export function dashscopeError(status: number, code: string, message: string, retryAfter?: string): Special {
  return { status, body: { request_id: randomUUID(), code, message }, ...(retryAfter ? { retryAfter } : {}) };
}

const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** DashScope's cancel stops a PENDING task; a later one is refused with UnsupportedOperation. */
export class DashscopeServer extends QueuedCancelServer<DashscopeReceived, DashscopeTask> {
  constructor(private readonly options: DashscopeServerOptions = {}) {
    super();
  }

  private failed(task: DashscopeTask): boolean {
    const trigger = this.options.failWhenPromptContains;
    return trigger !== undefined && String(task.body.input?.prompt ?? '').includes(trigger);
  }

  private taskStatus(task: DashscopeTask): string {
    const phase = phaseOf(task, this.options);
    if (phase === 'canceled') return 'CANCELED';
    if (phase === 'queued') return this.options.suspendWhileQueued ? 'SUSPENDED' : 'PENDING';
    if (phase === 'running') return 'RUNNING';
    return this.failed(task) ? 'FAILED' : 'SUCCEEDED';
  }

  protected handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer) {
    const download = /^\/oss\/([^/]+)\.mp4$/.exec(url.pathname);
    if (download) return this.download(response, this.tasks.get(download[1]));
    if (request.method === 'POST' && url.pathname === '/api/v1/services/aigc/video-generation/video-synthesis')
      return this.create(request, response, raw);
    if (!this.authorized(request))
      return sendSpecial(request, response, dashscopeError(401, 'InvalidApiKey', 'Invalid API-key provided.'));
    const one = /^\/api\/v1\/tasks\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    if (one && request.method === 'GET' && !one[2]) {
      const task = this.tasks.get(one[1]);
      this.polls++;
      if (!task)
        return sendJson(response, 200, {
          request_id: randomUUID(),
          output: { task_id: one[1], task_status: 'UNKNOWN' },
        });
      return sendJson(response, 200, this.object(task));
    }
    if (one && request.method === 'POST' && one[2]) {
      const task = this.tasks.get(one[1]);
      if (task && this.taskStatus(task) === 'PENDING') {
        task.canceledAt = Date.now();
        this.cancels.push(task.id);
        return sendJson(response, 200, { request_id: randomUUID() });
      }
      if (task) this.refusedCancels.push(task.id);
      return sendSpecial(
        request,
        response,
        dashscopeError(
          400,
          'UnsupportedOperation',
          'Failed to cancel the task, please confirm if the task is in PENDING status.',
        ),
      );
    }
    sendSpecial(request, response, dashscopeError(404, 'NotFound', 'Not found!'));
  }

  private object(task: DashscopeTask) {
    const status = this.taskStatus(task);
    const latency = clockOf(task, this.options).latencyMs ?? 200;
    const output: Record<string, unknown> = {
      task_id: task.id,
      task_status: status,
      submit_time: iso(task.createdAt),
    };
    if (status !== 'PENDING' && status !== 'SUSPENDED') output.scheduled_time = iso(task.createdAt + latency * 0.3);
    if (status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELED') output.end_time = iso(Date.now());
    if (status === 'SUCCEEDED') {
      output.video_url = `${this.url}/oss/${task.id}.mp4?Expires=${Math.floor(Date.now() / 1000) + 86_400}&Signature=x`;
      output.orig_prompt = task.body.input?.prompt;
    }
    if (status === 'FAILED') {
      output.code = 'DataInspectionFailed';
      output.message = 'Output data may contain inappropriate content.';
    }
    return {
      request_id: randomUUID(),
      output,
      ...(status === 'SUCCEEDED'
        ? {
            usage: {
              video_duration: Number(task.body.parameters?.duration ?? 5),
              video_ratio: '1280*720',
              video_count: 1,
            },
          }
        : {}),
    };
  }

  private authorized(request: IncomingMessage): boolean {
    return this.options.apiKey === undefined || request.headers.authorization === `Bearer ${this.options.apiKey}`;
  }

  private create(request: IncomingMessage, response: ServerResponse, raw: Buffer) {
    const index = this.submits.length;
    const body = JSON.parse(raw.toString('utf8') || '{}') as DashscopeReceived['body'];
    const async = request.headers['x-dashscope-async'] as string | undefined;
    this.submits.push({ authorization: request.headers.authorization, async, body });
    if (!this.authorized(request))
      return sendSpecial(request, response, dashscopeError(401, 'InvalidApiKey', 'Invalid API-key provided.'));
    if (async !== 'enable')
      return sendSpecial(
        request,
        response,
        dashscopeError(403, 'AccessDenied', 'current user api does not support synchronous calls'),
      );
    if (sendSpecial(request, response, this.options.submit?.(index, body))) return;
    if (typeof body.model !== 'string')
      return sendSpecial(request, response, dashscopeError(400, 'InvalidParameter', 'Model not exist.'));
    if (typeof body.input?.prompt !== 'string' && typeof body.input?.img_url !== 'string')
      return sendSpecial(request, response, dashscopeError(400, 'InvalidParameter', 'Field required: input.prompt'));
    const id = randomUUID();
    this.tasks.set(id, { id, createdAt: Date.now(), body });
    sendJson(response, 200, { request_id: randomUUID(), output: { task_id: id, task_status: 'PENDING' } });
  }

  /** The OSS link: the file while it lives (24 h), then 403 (the signature expired). */
  private download(response: ServerResponse, task: DashscopeTask | undefined) {
    if (!task || this.taskStatus(task) !== 'SUCCEEDED' || !linkAlive(task, this.options)) {
      response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    this.downloads++;
    sendClip(response, Number(task.body.parameters?.duration ?? 5), task.body);
  }
}
