/**
 * A key-echoing upstream (issue 25 N1): a loopback protocol server given `echoKey` writes the
 * credential it received back into an error text, as careless upstreams do (`invalid key Key
 * abc:def`, `bad Bearer r8_...`). What to echo, and where, is asked for in the task's prompt
 * (`echo-key <place> <form>`), so one server answers every case.
 *
 * Places: `submit` (a 422 refusal of the submit), `status` (the job reported failed at a poll),
 * `unauthorized` (a 401 to the submit), `poll-unauthorized` (a 401 to a status poll).
 * Forms: `header` (the Authorization header as sent: `Bearer X` or `Key X`), `bare` (X), `parts`
 * (each part of an `ACCESS:SECRET` key on its own), `url-encoded` (X percent-encoded).
 */
export const ECHO_PLACES = ['submit', 'status', 'unauthorized', 'poll-unauthorized'] as const;
export const ECHO_FORMS = ['header', 'bare', 'parts', 'url-encoded'] as const;
export type EchoPlace = (typeof ECHO_PLACES)[number];
export type EchoForm = (typeof ECHO_FORMS)[number];

/** The prompt that asks a key-echoing server for one place and form. */
export function echoPrompt(place: EchoPlace, form: EchoForm): string {
  return `a fox in the snow, Picture 1, echo-key ${place} ${form}`;
}

/** The place and form a prompt asks for, if any. */
export function echoAsked(prompt: unknown): { place: EchoPlace; form: EchoForm } | undefined {
  const match = /echo-key (\S+) (\S+)/.exec(String(prompt ?? ''));
  if (!match) return undefined;
  const [place, form] = [match[1] as EchoPlace, match[2] as EchoForm];
  return ECHO_PLACES.includes(place) && ECHO_FORMS.includes(form) ? { place, form } : undefined;
}

/** Words of each form's text that are not the key: they show which echo a text came from, once the key is gone. */
export const ECHO_MARKS: Record<EchoForm, string> = {
  header: 'the credentials',
  bare: 'your key is',
  parts: 'key id',
  'url-encoded': 'see https://upstream.invalid/keys',
};

/** The text an upstream that echoes keys would write, from the Authorization header it was sent. */
export function echoText(authorization: string | undefined, form: EchoForm): string {
  const header = authorization ?? '';
  const bare = header.replace(/^\S+\s+/, '');
  const text = {
    header: `${ECHO_MARKS.header} ${header} were not accepted`,
    bare: `${ECHO_MARKS.bare} ${bare}`,
    parts: `${ECHO_MARKS.parts} ${bare.split(':')[0]} with secret ${bare.split(':').slice(1).join(':')} is invalid`,
    'url-encoded': `${ECHO_MARKS['url-encoded']}?key=${encodeURIComponent(bare)} and key=${encodeURIComponent(bare)}`,
  }[form];
  return `Request refused: ${text}.`;
}

/** Every way a key may be written that must never be read outside the service: the key, its parts, each percent-encoded. */
export function secretForms(key: string): string[] {
  const parts = key.split(':').filter((part) => part !== key);
  return [...new Set([key, ...parts].flatMap((value) => [value, encodeURIComponent(value)]))];
}
