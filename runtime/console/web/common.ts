/** Shared by both pages: the page's texts, the JSON calls (with the CSRF token), the sign-in form, tiny DOM helpers. */
import type { UiTextKey } from '../../../generated/ui-text.js';
import { api, CallError, setCsrfToken, type ApiData } from './api.js';

export { api, CallError, csrfHeader, readEnvelope } from './api.js';

let texts: Record<string, string> | undefined;

/** The texts of the page's language: the server embeds them as a JSON data block (not a script, so the CSP allows it). */
function pageTexts(): Record<string, string> {
  texts ??= JSON.parse(document.getElementById('ui-text')?.textContent || '{}') as Record<string, string>;
  return texts;
}

/** One text with its {placeholders} filled. */
export function t(key: UiTextKey, params: Record<string, string | number | undefined> = {}): string {
  return (pageTexts()[key] ?? key).replace(/\{(\w+)\}/g, (whole, name: string) =>
    params[name] === undefined ? whole : String(params[name]),
  );
}

/** One text with elements in its placeholders: the order of the parts is the language's, not the code's. */
export function tNodes(key: UiTextKey, parts: Record<string, Node | string | number>): (Node | string)[] {
  const template = pageTexts()[key] ?? key;
  const out: (Node | string)[] = [];
  let last = 0;
  for (const match of template.matchAll(/\{(\w+)\}/g)) {
    out.push(template.slice(last, match.index));
    const part = parts[match[1]];
    out.push(part === undefined ? match[0] : typeof part === 'number' ? String(part) : part);
    last = match.index! + match[0].length;
  }
  out.push(template.slice(last));
  return out.filter((part) => part !== '');
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | number> = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false) continue;
    if (name === 'text') el.textContent = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null) el.append(child);
  return el;
}

/** The signed-in session (uiLanguage: the language of these pages for it, the account's setting, else Accept-Language). */
export type Session = ApiData<'/console/api/session', 'get'>;

/** The session, or a sign-up / sign-in form until there is one. */
export async function ensureSession(app: HTMLElement): Promise<Session> {
  for (;;) {
    try {
      const session = await api('get', '/console/api/session');
      // Signed in with an account language other than the page's (served before sign-in): load the page in it.
      if (session.uiLanguage !== document.documentElement.lang) {
        location.reload();
        return new Promise<Session>(() => {});
      }
      setCsrfToken(session.csrfToken);
      const who = document.getElementById('who')!;
      who.replaceChildren(session.email + ' ');
      const out = h('button', { class: 'secondary', id: 'signout', text: t('auth.signOut') });
      out.onclick = async () => {
        await api('post', '/console/api/signout');
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
    const password = h('input', {
      type: 'password',
      id: 'password',
      autocomplete: 'current-password',
      required: true,
      minlength: 8,
    });
    const message = h('p', { class: 'error', id: 'auth-error' });
    const submit = (path: '/console/api/signup' | '/console/api/signin') => async (event: Event) => {
      event.preventDefault();
      message.textContent = '';
      try {
        const data = await api('post', path, { body: { email: email.value, password: password.value } });
        setCsrfToken(data.csrfToken);
        resolve();
      } catch (error) {
        message.textContent = errorText(error);
      }
    };
    const signUp = h('button', {
      type: 'button',
      id: 'signup',
      text: t('auth.signUp', { credits: document.body.dataset.playgroundCredits ?? '' }),
    });
    const signIn = h('button', { type: 'submit', class: 'secondary', id: 'signin', text: t('auth.signIn') });
    signUp.onclick = submit('/console/api/signup');
    const form = h(
      'form',
      {},
      h('label', { for: 'email', text: t('auth.email') }),
      email,
      h('label', { for: 'password', text: t('auth.password') }),
      password,
      h('p', {}, signUp, ' ', signIn),
      message,
    );
    form.onsubmit = submit('/console/api/signin');
    app.replaceChildren(h('section', { id: 'auth' }, h('h2', { text: t('auth.title') }), form));
  });
}

/** The message of a failed call: the server's text, already in the session's language. */
export function errorText(error: unknown): string {
  return error instanceof CallError ? error.envelope.msg : t('common.networkError', { detail: String(error) });
}

const TASK_STATES: Record<string, UiTextKey> = {
  queued: 'state.queued',
  running: 'state.running',
  succeeded: 'state.succeeded',
  failed: 'state.failed',
  expired: 'state.expired',
  canceled: 'state.canceled',
};

/** A task state in the page's language (the API value stays in data-state). */
export function stateText(state: string): string {
  return TASK_STATES[state] ? t(TASK_STATES[state]) : state;
}
