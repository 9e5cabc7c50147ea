import type { TestService } from '../support/service.js';

/** A signed-in console user over plain HTTP: the session cookie and CSRF token, as the pages hold them. */
export interface ConsoleUser {
  cookie: string;
  csrf: string;
  call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown, options?: { csrf?: string | null }): Promise<{ status: number; body: { code: number; msg: string; data: T } }>;
}

export async function signUp(t: TestService, email: string, password = 'correct horse battery'): Promise<ConsoleUser> {
  const response = await fetch(`${t.url}/console/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`sign-up ${response.status}: ${await response.text()}`);
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
      const r = await fetch(`${t.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    },
  };
}
