import { posix } from 'node:path';
import ts from 'typescript';

/**
 * The imports of one runtime/ file that load another module when it runs: every relative `import`
 * and `export ... from` except the type-only ones (`import type`, `export type`, and an
 * `import { type A, type B }` whose every name is a type). Read with TypeScript's parser, so
 * strings and comments never count. Dynamic `import()` loads lazily, after both modules ran, and
 * cannot close a cycle at load: it is left out. The targets are paths from the root, `.ts`.
 */
export function valueImports(file: string, text: string): string[] {
  return valueSpecifiers(file, text)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts'));
}

/** The packages (`name` or `@scope/name`, Node's own `node:` modules aside) a file's value imports load with it. */
export function packageImports(file: string, text: string): string[] {
  const packages = valueSpecifiers(file, text)
    .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'))
    .map((spec) =>
      spec
        .split('/')
        .slice(0, spec.startsWith('@') ? 2 : 1)
        .join('/'),
    );
  return [...new Set(packages)];
}

/** The module specifiers of a file's static value imports and re-exports, as written. */
function valueSpecifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    let spec: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly);
      if (onlyTypes) continue;
      spec = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement)) {
      if (statement.isTypeOnly) continue;
      const clause = statement.exportClause;
      if (
        clause &&
        ts.isNamedExports(clause) &&
        clause.elements.length > 0 &&
        clause.elements.every((e) => e.isTypeOnly)
      )
        continue;
      spec = statement.moduleSpecifier;
    }
    if (spec && ts.isStringLiteral(spec)) specifiers.push(spec.text);
  }
  return specifiers;
}

/**
 * The cycles of a graph (file -> the files it imports): each strongly connected component of more
 * than one file, or a file importing itself, sorted (Tarjan's algorithm).
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}
