/**
 * The placeholders of a provider profile (spec/providers/README.md), filled for one request.
 * A value that is exactly one placeholder keeps the type of what it names ("{deadlineSeconds}"
 * sends a number, "{input}" an object); a placeholder inside a longer string is text. A member
 * whose value is absent is left out, and so is an object (an array's item) whose every
 * placeholder was absent. `{ each: "{list}", item: ... }` builds one item per element ({item}).
 */

/** What a placeholder names: its value, or undefined when absent. */
export type Names = (name: string) => unknown;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\}/g;
const ONE_PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\}$/;

/** Absent, as opposed to a value (null included). */
const ABSENT = Symbol('absent');
type Filled = unknown | typeof ABSENT;

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function fillString(text: string, names: Names): Filled {
  const one = ONE_PLACEHOLDER.exec(text);
  if (one) return names(one[1]) ?? ABSENT;
  let absent = false;
  const out = text.replace(PLACEHOLDER, (_, name: string) => {
    const value = names(name);
    if (value === undefined) absent = true;
    return value === undefined ? '' : asText(value);
  });
  return absent ? ABSENT : out;
}

/** Whether a template holds a placeholder anywhere (so it may come out absent). */
function hasPlaceholder(template: unknown): boolean {
  if (typeof template === 'string') return new RegExp(PLACEHOLDER.source).test(template);
  if (Array.isArray(template)) return template.some(hasPlaceholder);
  if (isMap(template)) return Object.values(template).some(hasPlaceholder);
  return false;
}

function isEach(template: unknown): template is { each: string; item: unknown } {
  return isMap(template) && typeof template.each === 'string' && 'item' in template;
}

function fillEach(template: { each: string; item: unknown }, names: Names): unknown[] {
  const list = fillString(template.each, names);
  const elements = Array.isArray(list) ? list : list === ABSENT ? [] : [list];
  const items: unknown[] = [];
  for (const element of elements) {
    const item = fill(template.item, (name) => (name === 'item' ? element : names(name)));
    if (item !== ABSENT) items.push(item);
  }
  return items;
}

function fill(template: unknown, names: Names): Filled {
  if (typeof template === 'string') return fillString(template, names);
  if (Array.isArray(template)) {
    const out: unknown[] = [];
    for (const item of template) {
      if (isEach(item)) out.push(...fillEach(item, names));
      else {
        const value = fill(item, names);
        if (value !== ABSENT) out.push(value);
      }
    }
    // A list whose every item carried what was absent is left out, like a member.
    return out.length === 0 && template.some((item) => hasPlaceholder(item) || isEach(item)) ? ABSENT : out;
  }
  if (isEach(template)) {
    const items = fillEach(template, names);
    return items.length ? items : ABSENT;
  }
  if (isMap(template)) {
    const out: Record<string, unknown> = {};
    let placeholders = 0;
    let present = 0;
    for (const [key, member] of Object.entries(template)) {
      const holds = hasPlaceholder(member) || isEach(member);
      const value = fill(member, names);
      if (holds) placeholders++;
      if (value === ABSENT) continue;
      if (holds) present++;
      out[key] = value;
    }
    return placeholders > 0 && present === 0 ? ABSENT : out;
  }
  return template;
}

/** A JSON template filled: undefined when nothing of it was present. */
export function fillTemplate(template: unknown, names: Names): unknown {
  const value = fill(template, names);
  return value === ABSENT ? undefined : value;
}

/**
 * A request path filled: each value URL-encoded, but `{submitPath}` (a path itself) as it is.
 * Undefined when a placeholder is absent (a handle without the value: not this protocol's).
 */
export function fillPath(path: string, names: Names): string | undefined {
  let absent = false;
  const out = path.replace(PLACEHOLDER, (_, name: string) => {
    const value = names(name);
    if (value === undefined || value === null) {
      absent = true;
      return '';
    }
    return name === 'submitPath' ? String(value) : encodeURIComponent(asText(value));
  });
  return absent ? undefined : out;
}

/** The `input.<field>` names a template uses: those fields are not repeated in {input}. */
export function namedInputFields(template: unknown): string[] {
  const names = new Set<string>();
  const visit = (node: unknown) => {
    if (typeof node === 'string')
      for (const [, name] of node.matchAll(PLACEHOLDER)) if (name.startsWith('input.')) names.add(name.slice(6));
    if (Array.isArray(node)) node.forEach(visit);
    if (isMap(node)) Object.values(node).forEach(visit);
  };
  visit(template);
  return [...names];
}
