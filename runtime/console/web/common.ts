/** Shared by both pages: the JSON calls (with the CSRF token), the sign-in form, tiny DOM helpers. */

export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

export class CallError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: Envelope<any>,
  ) {
    super(envelope?.msg ?? `HTTP ${status}`);
  }
}

let csrfToken = '';

export async function call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-Requested-With': 'mediaforge-console' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const envelope = (await response.json().catch(() => ({ code: response.status, msg: response.statusText, data: null }))) as Envelope<T>;
  if (!response.ok) throw new CallError(response.status, envelope);
  return envelope.data;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | number> = {}, ...children: (Node | string | null)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false) continue;
    if (name === 'text') el.textContent = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null) el.append(child);
  return el;
}

export interface Session {
  email: string;
  csrfToken: string;
  language: string | null;
  payloadVersion: number;
  languages: string[];
  events: string[];
}

/** The session, or a sign-up / sign-in form until there is one. */
export async function ensureSession(app: HTMLElement): Promise<Session> {
  for (;;) {
    try {
      const session = await call<Session>('GET', '/console/api/session');
      csrfToken = session.csrfToken;
      const who = document.getElementById('who')!;
      who.replaceChildren(session.email + ' ');
      const out = h('button', { class: 'secondary', id: 'signout', text: 'Sign out' });
      out.onclick = async () => {
        await call('POST', '/console/api/signout');
        location.reload();
      };
      who.append(out);
      return session;
    } catch (error) {
      if (!(error instanceof CallError) || error.status !== 401) throw error;
      await signInForm(app);
    }
  }
}

function signInForm(app: HTMLElement): Promise<void> {
  return new Promise((resolve) => {
    const email = h('input', { type: 'email', id: 'email', autocomplete: 'username', required: true });
    const password = h('input', { type: 'password', id: 'password', autocomplete: 'current-password', required: true, minlength: 8 });
    const message = h('p', { class: 'error', id: 'auth-error' });
    const submit = (path: string) => async (event: Event) => {
      event.preventDefault();
      message.textContent = '';
      try {
        const data = await call<{ csrfToken: string }>('POST', path, { email: email.value, password: password.value });
        csrfToken = data.csrfToken;
        resolve();
      } catch (error) {
        message.textContent = error instanceof CallError ? error.envelope.msg : String(error);
      }
    };
    const signUp = h('button', { type: 'button', id: 'signup', text: 'Create account (30 free playground credits)' });
    const signIn = h('button', { type: 'submit', class: 'secondary', id: 'signin', text: 'Sign in' });
    signUp.onclick = submit('/console/api/signup');
    const form = h('form', {}, h('label', { for: 'email', text: 'Email' }), email, h('label', { for: 'password', text: 'Password (8+ characters)' }), password, h('p', {}, signUp, ' ', signIn), message);
    form.onsubmit = submit('/console/api/signin');
    app.replaceChildren(h('section', { id: 'auth' }, h('h2', { text: 'Sign up or sign in' }), form));
  });
}

export function errorText(error: unknown): string {
  return error instanceof CallError ? error.envelope.msg : String(error);
}
