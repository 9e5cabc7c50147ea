import { request as httpRequest } from 'node:http';
import type { TestService } from '../support/service.js';

/** A signed-in console user over plain HTTP: the session cookie and CSRF token, as the pages hold them. */
export interface ConsoleUser {
  cookie: string;
  csrf: string;
  call<T = any>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    options?: { csrf?: string | null },
  ): Promise<{ status: number; body: { code: number; msg: string; data: T } }>;
}

/** The users row of a signed-up email (its id and accounts: the session answer names only the API account). */
export async function userRow(t: TestService, email: string) {
  return t.service.ctx.db.kysely
    .selectFrom('users')
    .select(['id', 'account_id', 'playground_account_id'])
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
}

export function signUp(t: TestService, email: string, password = 'correct horse battery'): Promise<ConsoleUser> {
  return openConsoleSession(t, '/console/api/signup', email, password);
}

/** A new session of a signed-up user (one whose session ended, or whose clock moved past it). */
export function signIn(t: TestService, email: string, password = 'correct horse battery'): Promise<ConsoleUser> {
  return openConsoleSession(t, '/console/api/signin', email, password);
}

async function openConsoleSession(
  t: TestService,
  path: '/console/api/signup' | '/console/api/signin',
  email: string,
  password: string,
): Promise<ConsoleUser> {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`${path} ${response.status}: ${await response.text()}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0];
  const csrf = ((await response.json()) as { data: { csrfToken: string } }).data.csrfToken;
  return {
    cookie,
    csrf,
    async call(method, path, body, options = {}) {
      const headers: Record<string, string> = { cookie };
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (token !== null) headers['x-csrf-token'] = token;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const r = await fetch(`${t.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as any };
    },
  };
}

export interface LoopbackAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/**
 * One HTTP request sent from a chosen loopback address (any of 127.0.0.0/8 on Linux), so that a
 * test can be several clients of a per-address limit. JSON bodies are sent and parsed.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<LoopbackAnswer> {
  const target = new URL(url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers };
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers,
        localAddress,
        timeout: 20_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url} within 20 s`)));
    request.on('error', reject);
    request.end(body);
  });
}

export const CONSOLE_HEADERS = { 'x-requested-with': 'mediaforge-console' };
