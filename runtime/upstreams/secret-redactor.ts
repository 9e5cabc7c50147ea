/** Replaces what must not leave an adapter in a text; the same text when there is nothing to hide. */
export type Redactor = (text: string) => string;

/**
 * The redactor of one upstream, which also learns the credentials its adapter derives from the key
 * (a signed JSON Web Token): `hide` adds one until it expires (milliseconds), after which no
 * upstream accepts it and it is forgotten, so the list stays as short as the adapter keeps it.
 */
export interface SecretRedactor extends Redactor {
  hide(derived: string, expiresAt: number): void;
}

export const REDACTED = '[redacted]';

/** A part of an `ACCESS:SECRET` key shorter than this is not hidden on its own: it would blank common words, and says nothing. */
const MIN_PART_CHARS = 4;

/** A URL up to the next whitespace (one match takes the whole run, so the scan stays linear): its query and fragment are where keys and signatures travel, and Node's own errors may quote a whole URL. */
const URL_IN_TEXT = /\bhttps?:\/\/\S*/gi;

/** The ways a value may be written back: as it is, percent-encoded (either case of hex), JSON-escaped. */
function writtenForms(value: string): string[] {
  const encoded = encodeURIComponent(value);
  return [
    value,
    encoded,
    encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    encodeURI(value),
    JSON.stringify(value).slice(1, -1),
  ];
}

/**
 * The redactor of one upstream, built from the key the operator configured for it: the key in
 * every form an adapter sends it or an upstream may echo it (after `Bearer ` or `Key `, bare, each
 * part of an `ACCESS:SECRET` key, percent-encoded, JSON-escaped) becomes `[redacted]`, and the
 * query of any URL in the text is dropped. Longest forms first, so that a part never leaves the
 * rest of a longer form behind. Plain substring replacement: linear in the text.
 */
export function secretRedactor(secret: string | undefined, now: () => number = Date.now): SecretRedactor {
  const values = secret
    ? [secret, ...secret.split(':').filter((part) => part !== secret && part.length >= MIN_PART_CHARS)]
    : [];
  const keyForms = [...new Set(values.flatMap(writtenForms))].filter(Boolean);
  /** Derived credentials by their expiry. */
  const derived = new Map<string, number>();
  let forms = sortedForms(keyForms, derived);
  const redact = ((text: string) => {
    let out = text;
    if ([...derived.values()].some((expiresAt) => expiresAt <= now())) {
      for (const [value, expiresAt] of derived) if (expiresAt <= now()) derived.delete(value);
      forms = sortedForms(keyForms, derived);
    }
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out.replace(URL_IN_TEXT, (url) => {
      const cut = url.search(/[?#]/);
      return cut < 0 ? url : `${url.slice(0, cut)}?${REDACTED}`;
    });
  }) as SecretRedactor;
  redact.hide = (value, expiresAt) => {
    if (!value || derived.get(value) === expiresAt) return;
    derived.set(value, expiresAt);
    forms = sortedForms(keyForms, derived);
  };
  return redact;
}

/** Every form to replace, longest first, so that a part never leaves the rest of a longer form behind. */
function sortedForms(keyForms: string[], derived: Map<string, number>): string[] {
  const all = [...keyForms, ...[...derived.keys()].flatMap(writtenForms)];
  return [...new Set(all)].filter(Boolean).sort((a, b) => b.length - a.length);
}
