import {
  IndentationText,
  NewLineKind,
  Project,
  QuoteKind,
  VariableDeclarationKind,
  Writers,
  type WriterFunction,
} from 'ts-morph';
import { operations } from '../../load/operations.js';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';

/**
 * generated/routes.ts, built as an AST with ts-morph: the route table the runtime binds and a
 * `Handlers` interface with one typed method per operationId, so a missing handler is a type error.
 * generated/console/routes.ts is the same for the console's internal operations (session, not key;
 * layer `console`), typed from generated/console/types.ts: both tables go through the one binder.
 */
export const routesPlugin: Plugin = {
  name: 'routes',
  dependsOn: ['openapi', 'sdk-types', 'console-types'],
  emit: ({ emitted }) => [
    {
      path: 'routes.ts',
      contents: routesFile(JSON.parse(emitted.get('openapi.json')!.contents) as JsonSchema, PUBLIC),
      inputs: ['generated/openapi.json'],
    },
    {
      path: 'console/routes.ts',
      contents: routesFile(JSON.parse(emitted.get('console/openapi.json')!.contents) as JsonSchema, CONSOLE),
      inputs: ['generated/console/openapi.json'],
    },
  ],
};

/** What differs between the public table and the console's: where the operation types are, and the layer. */
interface TableKind {
  typesModule: string;
  layers: string;
  layerOf?: string;
  docs: string;
}
const PUBLIC: TableKind = {
  typesModule: './sdk/types.js',
  layers: "'envelope' | 'compatible'",
  docs: 'Every operation of the merged OpenAPI document.',
};
const CONSOLE: TableKind = {
  typesModule: './types.js',
  layers: "'console'",
  layerOf: 'console',
  docs: "Every operation of the console's internal document (x-internal): answered by the same binder, behind the session.",
};

function routesFile(doc: JsonSchema, kind: TableKind): string {
  const entries = operations(doc).map((op) => ({
    ...op,
    layer: kind.layerOf ?? op.layer,
    fastifyPath: op.path.replace(/\{(\w+)\}/g, ':$1'),
    spans: op.parameters.find((p) => p.in === 'path' && p.spansSegments)?.name,
  }));
  const project = new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      quoteKind: QuoteKind.Single,
      newLineKind: NewLineKind.LineFeed,
    },
  });
  const file = project.createSourceFile('routes.ts');
  file.addImportDeclaration({ isTypeOnly: true, namedImports: ['operations'], moduleSpecifier: kind.typesModule });
  file.addTypeAlias({
    isExported: true,
    name: 'OperationId',
    type: entries.map((e) => `'${e.operationId}'`).join(' | '),
  });
  file.addInterface({
    isExported: true,
    name: 'RouteDef',
    properties: [
      { name: 'operationId', type: 'OperationId', isReadonly: true },
      { name: 'method', type: "'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE'", isReadonly: true },
      { name: 'path', type: 'string', isReadonly: true, docs: ['Path as in the OpenAPI document.'] },
      { name: 'fastifyPath', type: 'string', isReadonly: true },
      {
        name: 'layer',
        type: kind.layers,
        isReadonly: true,
        docs: [
          "envelope: answers (errors too) in the {code, msg, data, request_id} envelope; compatible: the third-party shapes (the operation's x-layer); console: the envelope, with the console's refusals.",
        ],
      },
      {
        name: 'body',
        type: "'json' | 'raw' | 'multipart'",
        isReadonly: true,
        docs: [
          'How the body is read: JSON (also where there is none), raw bytes as a stream, or multipart/form-data (JSON too).',
        ],
      },
      {
        name: 'spansSegments',
        type: 'string',
        isReadonly: true,
        hasQuestionToken: true,
        docs: ['The path parameter (the last) that may also arrive with unencoded slashes (x-spans-segments).'],
      },
      {
        name: 'auth',
        type: 'boolean',
        isReadonly: true,
        docs: [
          'false: reached by a signed link, not a Bearer key (console: without a session, behind X-Requested-With).',
        ],
      },
      {
        name: 'role',
        type: "'operator'",
        isReadonly: true,
        hasQuestionToken: true,
        docs: [
          'operator: the security is operatorSession; a signed-in user without the role is refused (403) before the input is read.',
        ],
      },
    ],
  });
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    docs: [kind.docs],
    declarations: [
      {
        name: 'routes',
        type: 'readonly RouteDef[]',
        initializer: arrayOf(
          entries.map((e) =>
            Writers.object({
              operationId: quote(e.operationId),
              method: quote(e.method),
              path: quote(e.path),
              fastifyPath: quote(e.fastifyPath),
              layer: quote(e.layer),
              body: quote(e.bodyKind),
              auth: String(e.auth),
              ...(e.role ? { role: quote(e.role) } : {}),
              ...(e.spans ? { spansSegments: quote(e.spans) } : {}),
            }),
          ),
        ),
      },
    ],
  });
  const op = 'Op extends OperationId';
  const responses = "operations[Op]['responses']";
  file.addTypeAliases([
    {
      name: 'SuccessBody',
      typeParameters: [op],
      docs: ['The JSON body of the 2xx responses of an operation.'],
      type: `{ [S in keyof ${responses}]: S extends 200 | 201 | 202 ? (${responses}[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof ${responses}]`,
    },
    {
      isExported: true,
      name: 'ReplyData',
      typeParameters: [op],
      docs: [
        "What a handler returns as `data`: the envelope's data on the main API, the whole body on the compatible layer.",
      ],
      type: 'SuccessBody<Op> extends { code: number; data?: infer D } ? D : SuccessBody<Op>',
    },
    {
      isExported: true,
      name: 'JsonBody',
      typeParameters: [op],
      type: "operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never",
    },
    ...(['query', 'path', 'header'] as const).map((where) => ({
      isExported: true,
      name: `${where === 'header' ? 'Headers' : where[0].toUpperCase() + where.slice(1)}Of`,
      typeParameters: [op],
      type: `operations[Op]['parameters'] extends { ${where}?: infer P } ? P : never`,
    })),
    {
      isExported: true,
      name: 'RouteReply',
      typeParameters: [op],
      docs: ['A JSON reply, or a raw one (bytes, a redirect) for the operations that answer with no JSON.'],
      type: Writers.unionType(
        '{ status: number; data: ReplyData<Op>; headers?: Record<string, string> }',
        '{ status: number; raw: Uint8Array | NodeJS.ReadableStream | null; headers: Record<string, string> }',
      ),
    },
  ]);
  file.addInterface({
    isExported: true,
    name: 'Handlers',
    typeParameters: [{ name: 'Requests', constraint: '{ [Op in OperationId]: unknown }' }],
    docs: [
      "One handler per operationId, each given its operation's request type; the runtime must implement every one.",
    ],
    methods: entries.map((e) => ({
      name: e.operationId,
      parameters: [{ name: 'request', type: `Requests['${e.operationId}']` }],
      returnType: `Promise<RouteReply<'${e.operationId}'>>`,
      docs: [`${e.method} ${e.path}${e.summary ? `: ${e.summary}` : ''}`],
    })),
  });
  return file.getFullText();
}

const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** An array literal of the given elements, one a line. */
function arrayOf(items: WriterFunction[]): WriterFunction {
  return (writer) => {
    writer.write('[').newLine();
    writer.indent(() => {
      for (const item of items) {
        item(writer);
        writer.write(',').newLine();
      }
    });
    writer.write(']');
  };
}
