import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ts } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { type ModuleSpec, printModule } from '../../../generator/print/module.js';

const f = ts.factory;
const dir = mkdtempSync(join(tmpdir(), 'print-module-'));

/** A template written to a file of its own (printModule caches templates by path). */
function template(name: string, text: string): URL {
  const path = join(dir, `${name}.ts`);
  writeFileSync(path, text);
  return pathToFileURL(path);
}

const documented = (name: string, doc: string) =>
  ts.addSyntheticLeadingComment(
    f.createMethodSignature(undefined, name, undefined, undefined, [], f.createTypeReferenceNode('void')),
    ts.SyntaxKind.MultiLineCommentTrivia,
    `* ${doc} `,
    true,
  );
const declared = (name: string) =>
  f.createVariableStatement(
    [f.createModifier(ts.SyntaxKind.ExportKeyword), f.createModifier(ts.SyntaxKind.DeclareKeyword)],
    f.createVariableDeclarationList(
      [f.createVariableDeclaration(name, undefined, f.createTypeReferenceNode('Check'))],
      ts.NodeFlags.Const,
    ),
  );

// The parts of printModule the routes and requests plugins use: an interface's members, a namespace
// import, statements after the template's text.
const cases: [string, { given: [string, Omit<ModuleSpec, 'template'>]; want: string }][] = [
  [
    "a placeholder interface's sample members are replaced, one a line, each under its comment",
    {
      given: [
        'export interface Handlers {\n  sample(): void;\n}\n',
        { members: { Handlers: [documented('a', 'GET /a'), documented('b', 'POST /b')] } },
      ],
      want: 'export interface Handlers {\n  /** GET /a */\n  a(): void;\n  /** POST /b */\n  b(): void;\n}\n',
    },
  ],
  [
    'an indented interface keeps its indentation',
    {
      given: ['namespace N {\n  export interface I {\n    x: 1;\n  }\n}\n', { members: { I: [documented('a', 'A')] } }],
      want: 'namespace N {\n  export interface I {\n    /** A */\n    a(): void;\n  }\n}\n',
    },
  ],
  [
    'a namespace import is added after the template imports',
    {
      given: [
        "import type { X } from './x.js';\nexport const y: X = 1;\n",
        { addImports: [{ namespaceImport: 'validators', moduleSpecifier: './validators.js' }] },
      ],
      want: "import type { X } from './x.js';\nimport * as validators from './validators.js';\nexport const y: X = 1;\n",
    },
  ],
  [
    'statements are appended after the template text, one a line',
    {
      given: [
        'export interface Check {\n  (value: unknown): boolean;\n}\n',
        { addStatements: [declared('a'), declared('b')] },
      ],
      want: 'export interface Check {\n  (value: unknown): boolean;\n}\n\nexport declare const a: Check;\nexport declare const b: Check;\n',
    },
  ],
];

describe('printModule', () => {
  it.each(cases)('%s', (name, { given: [text, spec], want }) => {
    expect(printModule({ template: template(name.replace(/\W+/g, '-'), text), ...spec })).toBe(want);
  });

  it('refuses a placeholder interface the template does not have', () => {
    expect(() =>
      printModule({ template: template('no-interface', 'export type T = 1;\n'), members: { Handlers: [] } }),
    ).toThrow(/no placeholder interface Handlers/);
  });
});
