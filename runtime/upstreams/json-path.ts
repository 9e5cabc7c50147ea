/**
 * The JSON paths of a provider profile (spec/providers/README.md): names joined by dots, each
 * followed by `[n]` (one element) or `[*]` (every element): `render.files[*].href`.
 */

type Step = { name: string } | { index: number } | { every: true };

/** A path's steps; the generator has checked its syntax, so anything unreadable is a name. */
function steps(path: string): Step[] {
  const out: Step[] = [];
  for (const part of path.split('.')) {
    const [name, ...brackets] = part.split('[');
    out.push({ name });
    for (const bracket of brackets) {
      const inner = bracket.slice(0, -1);
      out.push(inner === '*' ? { every: true } : { index: Number(inner) });
    }
  }
  return out;
}

/** Every value the path reaches (several through `[*]`); none when it leads nowhere. */
export function valuesAt(document: unknown, path: string): unknown[] {
  let nodes: unknown[] = [document];
  for (const step of steps(path)) {
    const next: unknown[] = [];
    for (const node of nodes) {
      if ('name' in step) {
        if (typeof node === 'object' && node !== null && !Array.isArray(node) && Object.hasOwn(node, step.name))
          next.push((node as Record<string, unknown>)[step.name]);
      } else if (Array.isArray(node)) {
        if ('every' in step) next.push(...node);
        else if (step.index < node.length) next.push(node[step.index]);
      }
    }
    nodes = next;
  }
  return nodes.filter((v) => v !== undefined && v !== null);
}

/** The first value the path reaches, if any. */
export function valueAtPath(document: unknown, path: string): unknown {
  return valuesAt(document, path)[0];
}
