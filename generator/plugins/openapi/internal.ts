import type { JsonSchema } from '../../load/types.js';

/**
 * spec/openapi.yaml also describes the console's own JSON API (the pages' calls), marked
 * `x-internal: true` on its operations, tag and components. The public document (openapi.json:
 * the docs site, the SDK types, the route table) leaves all of it out; the internal document holds
 * the internal operations and only the components they reach (some are public ones: TaskRecord,
 * Asset, Warning).
 */

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const;
const COMPONENT_KINDS = ['schemas', 'responses', 'parameters', 'headers', 'securitySchemes', 'requestBodies'] as const;

type Doc = JsonSchema & {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  tags?: { name: string; 'x-internal'?: boolean }[];
};

const isInternal = (value: unknown) =>
  typeof value === 'object' && value !== null && (value as Record<string, unknown>)['x-internal'] === true;

/** The path items with only the operations `keep` accepts (items left without any are dropped). */
function filterPaths(paths: Doc['paths'], keep: (op: unknown) => boolean): Doc['paths'] {
  const out: Doc['paths'] = {};
  for (const [path, item] of Object.entries(paths)) {
    const kept = Object.fromEntries(
      Object.entries(item).filter(([key, op]) => !(METHODS as readonly string[]).includes(key) || keep(op)),
    );
    if (METHODS.some((m) => m in kept)) out[path] = kept;
  }
  return out;
}

/** The public document: every internal operation, tag and component left out. */
export function publicDocument(merged: JsonSchema): JsonSchema {
  const doc = structuredClone(merged) as Doc;
  doc.paths = filterPaths(doc.paths, (op) => !isInternal(op));
  if (doc.tags) doc.tags = doc.tags.filter((tag) => !isInternal(tag));
  for (const kind of COMPONENT_KINDS) {
    const entries = doc.components[kind];
    if (entries)
      doc.components[kind] = Object.fromEntries(Object.entries(entries).filter(([, value]) => !isInternal(value)));
  }
  return doc;
}

/** Every `#/components/<kind>/<name>` reached from `root`, followed through the components. */
function reachedComponents(doc: Doc, root: unknown): Set<string> {
  const seen = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/') && !seen.has(value)) {
        seen.add(value);
        const [, , kind, name] = value.split('/');
        walk(doc.components[kind]?.[name]);
      } else walk(value);
    }
  };
  walk(root);
  return seen;
}

/** The internal document: the internal operations, their tag, and the components they reach. */
export function internalDocument(merged: JsonSchema): JsonSchema {
  const doc = structuredClone(merged) as Doc;
  const paths = filterPaths(doc.paths, isInternal);
  const security = doc.components.securitySchemes ?? {};
  const schemeNames = Object.keys(security).filter((name) => isInternal(security[name]));
  const reached = reachedComponents(doc, paths);
  const components: Doc['components'] = {};
  for (const kind of COMPONENT_KINDS) {
    const entries = doc.components[kind] ?? {};
    const kept = Object.entries(entries).filter(
      ([name]) =>
        reached.has(`#/components/${kind}/${name}`) || (kind === 'securitySchemes' && schemeNames.includes(name)),
    );
    if (kept.length > 0) components[kind] = Object.fromEntries(kept);
  }
  return {
    openapi: doc.openapi,
    info: {
      ...(doc.info as object),
      title: `${(doc.info as { title: string }).title} console (internal)`,
      description:
        'The JSON API of the console and playground pages: same origin, session cookie. Not a public contract.',
    },
    'x-internal': true,
    tags: (doc.tags ?? []).filter(isInternal),
    security: schemeNames.map((name) => ({ [name]: [] })),
    paths,
    components,
  };
}
