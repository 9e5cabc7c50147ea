import { ts } from 'ts-morph';
import { boundOperations, type Operation } from '../../load/operations.js';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';
import { stringUnion } from '../../print/literal.js';
import { printModule } from '../../print/module.js';

/**
 * generated/routes.ts, printed from this plugin's template: the route table the runtime binds and a
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
  layers: string[];
  layerOf?: string;
}
const PUBLIC: TableKind = { typesModule: './sdk/types.js', layers: ['envelope', 'compatible'] };
const CONSOLE: TableKind = { typesModule: './types.js', layers: ['console'], layerOf: 'console' };

const f = ts.factory;

/** `name(request: Requests['name']): Promise<RouteReply<'name'>>;`, documented by its method, path and summary. */
function handlerMethod(op: Operation): ts.MethodSignature {
  const id = () => f.createLiteralTypeNode(f.createStringLiteral(op.operationId, true));
  const method = f.createMethodSignature(
    undefined,
    op.operationId,
    undefined,
    undefined,
    [
      f.createParameterDeclaration(
        undefined,
        undefined,
        'request',
        undefined,
        f.createIndexedAccessTypeNode(f.createTypeReferenceNode('Requests'), id()),
      ),
    ],
    f.createTypeReferenceNode('Promise', [f.createTypeReferenceNode('RouteReply', [id()])]),
  );
  const doc = `${op.method} ${op.path}${op.summary ? `: ${op.summary}` : ''}`;
  return ts.addSyntheticLeadingComment(method, ts.SyntaxKind.MultiLineCommentTrivia, `* ${doc} `, true);
}

function routesFile(doc: JsonSchema, kind: TableKind): string {
  // An operation bound by a scope of its own (x-bound-by) is described by the contract, not bound here.
  const ops = boundOperations(doc);
  return printModule({
    template: new URL('./template.ts', import.meta.url),
    imports: { '../../../generated/sdk/types.js': kind.typesModule },
    types: {
      OperationId: stringUnion(ops.map((op) => op.operationId)),
      Layer: stringUnion(kind.layers),
    },
    members: { Handlers: ops.map(handlerMethod) },
    values: {
      routes: ops.map((op) => {
        const spans = op.parameters.find((p) => p.in === 'path' && p.spansSegments)?.name;
        return {
          operationId: op.operationId,
          method: op.method,
          path: op.path,
          fastifyPath: op.path.replace(/\{(\w+)\}/g, ':$1'),
          layer: kind.layerOf ?? op.layer,
          body: op.bodyKind,
          auth: op.auth,
          role: op.role,
          spansSegments: spans,
        };
      }),
    },
  });
}
