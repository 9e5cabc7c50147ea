import { readFileSync } from 'node:fs';
import { ts, type ImportDeclarationStructure, type OptionalKind } from 'ts-morph';
import { literal } from './literal.js';

/**
 * A generated TypeScript module: a hand-written template (a real module under generator/,
 * type-checked with the rest of it) whose placeholder declarations receive the spec's data as
 * syntax nodes. The template keeps its own text, exactly as written and formatted; each node put
 * into it (a placeholder's value or type, an import's specifier, an added import) is printed by the
 * TypeScript printer that ts-morph ships, in place of the span it replaces.
 *
 * Why not ts-morph's manipulation API (transform, then formatText) for every module: it re-parses
 * and re-formats the whole file per model, about 4 ms each; with the catalogue at 1,000 models that
 * made generation three times slower (23 s against 8 s). Here a template is parsed once per
 * generation and each module costs the printing of its data.
 */
export interface ModuleSpec {
  /** The template, e.g. new URL('./template.ts', import.meta.url). */
  template: URL;
  /** A module specifier of the template -> the specifier in generated/ (`../support/template.js` -> `./support.js`). */
  imports?: Record<string, string>;
  /** The name of a placeholder `const` -> the value its initializer becomes (see literal()). */
  values?: Record<string, unknown>;
  /** The name of a placeholder `type` alias -> the type it becomes. */
  types?: Record<string, ts.TypeNode>;
  /** The name of a placeholder `interface` -> the members that replace its sample ones, one a line. */
  members?: Record<string, ts.TypeElement[]>;
  /** Import declarations placed after the template's own (named imports, or a namespace import). */
  addImports?: OptionalKind<ImportDeclarationStructure>[];
  /** Statements printed after the template's text, one a line (a declaration per generated name, say). */
  addStatements?: ts.Statement[];
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

const f = ts.factory;
const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });
/** Parsed templates by path: one parse per template and process. */
const templates = new Map<string, ts.SourceFile>();

function parsedTemplate(url: URL): ts.SourceFile {
  let file = templates.get(url.href);
  if (!file) {
    file = ts.createSourceFile(url.pathname, readFileSync(url, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    templates.set(url.href, file);
  }
  return file;
}

/**
 * A node printed for the place it goes: the printer indents by four spaces, this project by two, and
 * a line after the first continues at the indentation of the line it is put in. (The printer never
 * writes a line break inside a string literal, so every leading run of spaces is indentation.)
 */
function printed(hint: ts.EmitHint, node: ts.Node, file: ts.SourceFile, at: number): string {
  const text = printer.printNode(hint, node, file);
  const lineStart = file.text.lastIndexOf('\n', at - 1) + 1;
  const base = /^[ \t]*/.exec(file.text.slice(lineStart, at))![0];
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? line : base + line.replace(/^( {4})+/, (run) => ' '.repeat(run.length / 2))))
    .join('\n');
}

/** The value inside `x as const`, `x satisfies T` and parentheses is the one replaced; the wrappers stay. */
function innerValue(expression: ts.Expression): ts.Expression {
  if (ts.isSatisfiesExpression(expression) || ts.isAsExpression(expression) || ts.isParenthesizedExpression(expression))
    return innerValue(expression.expression);
  return expression;
}

function importDeclaration(structure: OptionalKind<ImportDeclarationStructure>): ts.ImportDeclaration {
  const specifier = f.createStringLiteral(structure.moduleSpecifier, true);
  if (structure.namespaceImport)
    return f.createImportDeclaration(
      undefined,
      f.createImportClause(false, undefined, f.createNamespaceImport(f.createIdentifier(structure.namespaceImport))),
      specifier,
    );
  const named = Array.isArray(structure.namedImports) ? structure.namedImports : [];
  const specifiers = named.map((item) => {
    if (typeof item !== 'object' || typeof item.name !== 'string')
      throw new Error('addImports: named imports are given as { name, alias? }');
    return f.createImportSpecifier(
      false,
      item.alias ? f.createIdentifier(item.name) : undefined,
      f.createIdentifier(item.alias ?? item.name),
    );
  });
  return f.createImportDeclaration(
    undefined,
    f.createImportClause(false, undefined, f.createNamedImports(specifiers)),
    specifier,
  );
}

/** Prints a module from its template; throws when a placeholder or import named in `spec` is not in the template. */
export function printModule(spec: ModuleSpec): string {
  const file = parsedTemplate(spec.template);
  const where = spec.template.pathname;
  const values = spec.values ?? {};
  const types = spec.types ?? {};
  const members = spec.members ?? {};
  const edits: Edit[] = [];
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      Object.hasOwn(values, node.name.text)
    ) {
      const target = innerValue(node.initializer);
      const start = target.getStart(file);
      edits.push({
        start,
        end: target.end,
        text: printed(ts.EmitHint.Expression, literal(values[node.name.text]), file, start),
      });
      found.add(`const ${node.name.text}`);
    } else if (ts.isTypeAliasDeclaration(node) && Object.hasOwn(types, node.name.text)) {
      const start = node.type.getStart(file);
      edits.push({
        start,
        end: node.type.end,
        text: printed(ts.EmitHint.Unspecified, types[node.name.text], file, start),
      });
      found.add(`type ${node.name.text}`);
    } else if (ts.isInterfaceDeclaration(node) && Object.hasOwn(members, node.name.text)) {
      const lineStart = file.text.lastIndexOf('\n', node.getStart(file) - 1) + 1;
      const base = /^[ \t]*/.exec(file.text.slice(lineStart))![0];
      // Each member on its own lines at the interface's indentation plus two, its comment above it.
      const lines = members[node.name.text].flatMap((member) =>
        printer
          .printNode(ts.EmitHint.Unspecified, member, file)
          .split('\n')
          .map((line) => `\n${base}  ${line.replace(/^( {4})+/, (run) => ' '.repeat(run.length / 2))}`),
      );
      edits.push({ start: node.members.pos, end: node.end - 1, text: `${lines.join('')}\n${base}` });
      found.add(`interface ${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  for (const name of Object.keys(values))
    if (!found.has(`const ${name}`)) throw new Error(`${where}: no placeholder const ${name}`);
  for (const name of Object.keys(types))
    if (!found.has(`type ${name}`)) throw new Error(`${where}: no placeholder type ${name}`);
  for (const name of Object.keys(members))
    if (!found.has(`interface ${name}`)) throw new Error(`${where}: no placeholder interface ${name}`);

  const declarations = file.statements.filter(
    (s): s is ts.ImportDeclaration | ts.ExportDeclaration => ts.isImportDeclaration(s) || ts.isExportDeclaration(s),
  );
  for (const [from, to] of Object.entries(spec.imports ?? {})) {
    const matching = declarations.filter(
      (d) => d.moduleSpecifier && ts.isStringLiteral(d.moduleSpecifier) && d.moduleSpecifier.text === from,
    );
    if (matching.length === 0) throw new Error(`${where}: no import from ${from}`);
    for (const d of matching) {
      const specifier = d.moduleSpecifier!;
      edits.push({
        start: specifier.getStart(file),
        end: specifier.end,
        text: printer.printNode(ts.EmitHint.Unspecified, f.createStringLiteral(to, true), file),
      });
    }
  }
  if (spec.addImports?.length) {
    const imports = file.statements.filter(ts.isImportDeclaration);
    const at = imports.length ? imports[imports.length - 1].end : 0;
    const added = spec.addImports.map((structure) =>
      printer.printNode(ts.EmitHint.Unspecified, importDeclaration(structure), file),
    );
    edits.push({ start: at, end: at, text: `${at ? '\n' : ''}${added.join('\n')}${at ? '' : '\n'}` });
  }

  let text = file.text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  if (!text.endsWith('\n')) text = `${text}\n`;
  if (spec.addStatements?.length)
    text += `\n${spec.addStatements.map((s) => printer.printNode(ts.EmitHint.Unspecified, s, file)).join('\n')}\n`;
  return text;
}
