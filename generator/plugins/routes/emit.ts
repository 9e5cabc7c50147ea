import { IndentationText, NewLineKind, Project, QuoteKind, VariableDeclarationKind } from 'ts-morph';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

export interface RouteEntry {
  operationId: string;
  method: string;
  path: string;
  fastifyPath: string;
  envelope: boolean;
  auth: boolean;
  summary: string;
}

/** Every operation of the merged document, in path order. */
export function routeEntries(doc: JsonSchema): RouteEntry[] {
  const paths = doc.paths as Record<string, Record<string, { operationId: string; summary?: string }>>;
  const out: RouteEntry[] = [];
  for (const path of Object.keys(paths).sort()) {
    for (const method of METHODS) {
      const op = paths[path][method] as { operationId: string; summary?: string; security?: unknown[] } | undefined;
      if (!op) continue;
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        fastifyPath: path.replace(/\{(\w+)\}/g, ':$1'),
        // The main API answers in the envelope; the compatible layer (/v1) in the third-party shapes.
        envelope: path.startsWith('/api/'),
        // `security: []` marks the operations reached by a signed link instead of a key.
        auth: !(Array.isArray(op.security) && op.security.length === 0),
        summary: op.summary ?? '',
      });
    }
  }
  return out;
}

/**
 * generated/routes.ts, built as an AST with ts-morph: the route table the runtime binds and a
 * `Handlers` interface with one typed method per operationId, so a missing handler is a type error.
 */
export const routesPlugin: Plugin = {
  name: 'routes',
  dependsOn: ['openapi', 'sdk-types'],
  emit: ({ emitted }) => {
    const doc = JSON.parse(emitted.get('openapi.json')!.contents) as JsonSchema;
    const entries = routeEntries(doc);
    const project = new Project({
      useInMemoryFileSystem: true,
      manipulationSettings: { indentationText: IndentationText.TwoSpaces, quoteKind: QuoteKind.Single, newLineKind: NewLineKind.LineFeed },
    });
    const file = project.createSourceFile('routes.ts');
    file.addImportDeclaration({ isTypeOnly: true, namedImports: ['operations'], moduleSpecifier: './sdk/types.js' });
    file.addTypeAlias({ isExported: true, name: 'OperationId', type: entries.map((e) => `'${e.operationId}'`).join(' | ') });
    file.addInterface({
      isExported: true,
      name: 'RouteDef',
      properties: [
        { name: 'operationId', type: 'OperationId', isReadonly: true },
        { name: 'method', type: "'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE'", isReadonly: true },
        { name: 'path', type: 'string', isReadonly: true, docs: ['Path as in the OpenAPI document.'] },
        { name: 'fastifyPath', type: 'string', isReadonly: true },
        { name: 'envelope', type: 'boolean', isReadonly: true, docs: ['true: the response is the {code, msg, data, request_id} envelope.'] },
        { name: 'auth', type: 'boolean', isReadonly: true, docs: ['false: reached by a signed link, not a Bearer key.'] },
      ],
    });
    file.addVariableStatement({
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: ['Every operation of the merged OpenAPI document.'],
      declarations: [
        {
          name: 'routes',
          type: 'readonly RouteDef[]',
          initializer: `[\n${entries
            .map((e) => `  { operationId: '${e.operationId}', method: '${e.method}', path: '${e.path}', fastifyPath: '${e.fastifyPath}', envelope: ${e.envelope}, auth: ${e.auth} },`)
            .join('\n')}\n]`,
        },
      ],
    });
    file.addStatements([
      '/** The JSON body of the 2xx responses of an operation. */',
      "type SuccessBody<Op extends OperationId> = { [S in keyof operations[Op]['responses']]: S extends 200 | 201 | 202 ? (operations[Op]['responses'][S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof operations[Op]['responses']];",
      '/** What a handler returns as `data`: the envelope\'s data on the main API, the whole body on the compatible layer. */',
      "export type ReplyData<Op extends OperationId> = SuccessBody<Op> extends { code: number; data?: infer D } ? D : SuccessBody<Op>;",
      "export type JsonBody<Op extends OperationId> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;",
      "export type QueryOf<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q } ? Q : never;",
      "export type PathOf<Op extends OperationId> = operations[Op]['parameters'] extends { path?: infer P } ? P : never;",
      '/** A JSON reply, or a raw one (bytes, a redirect) for the operations that answer with no JSON. */',
      'export type RouteReply<Op extends OperationId> =',
      '  | { status: number; data: ReplyData<Op>; headers?: Record<string, string> }',
      '  | { status: number; raw: Uint8Array | NodeJS.ReadableStream | null; headers: Record<string, string> };',
    ]);
    file.addInterface({
      isExported: true,
      name: 'Handlers',
      typeParameters: ['Request'],
      docs: ['One handler per operationId; the runtime must implement every one.'],
      methods: entries.map((e) => ({
        name: e.operationId,
        parameters: [{ name: 'request', type: 'Request' }],
        returnType: `Promise<RouteReply<'${e.operationId}'>>`,
        docs: [`${e.method} ${e.path}${e.summary ? `: ${e.summary}` : ''}`],
      })),
    });
    return [{ path: 'routes.ts', contents: file.getFullText(), inputs: ['generated/openapi.json'] }];
  },
};
