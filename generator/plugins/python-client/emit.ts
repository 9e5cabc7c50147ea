import type { GeneratedFile, Plugin } from '../../plugin.js';
import { createRequestSchemaName, inputSchemaName } from '../../naming.js';
import { pyClassName, pyString, PythonTypes, type Schema } from './python-types.js';

/** Where the Python files go: write.ts routes this prefix to clients/python/src/mediaforge/_generated/. */
export const PYTHON_PREFIX = 'python/';

interface Operation {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  'x-internal'?: boolean;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, unknown> };
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** The schemas the /api/v1 operations reach (the compatible layer's /v1 shapes are the openai SDK's business). */
function reachableSchemas(doc: Document): string[] {
  const seen = new Set<string>();
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const [, kind, name] = /^#\/components\/(schemas|parameters|responses)\/(.+)$/.exec(value) ?? [];
        if (kind === 'schemas' && !seen.has(name)) {
          seen.add(name);
          walk(doc.components.schemas[name]);
        } else if (kind === 'parameters') walk(doc.components.parameters?.[name]);
      } else walk(value);
    }
  };
  for (const [path, item] of Object.entries(doc.paths)) if (path.startsWith('/api/v1/')) walk(item);
  return [...seen].sort();
}

const LEAD = 'from __future__ import annotations\n\n';

function modelsModule(doc: Document, modelIds: string[]): string {
  const types = new PythonTypes(doc.components.schemas, (name) => pyClassName(name));
  for (const id of modelIds)
    types.typedDict(inputClass(id), doc.components.schemas[inputSchemaName(id)], `Input of \`${id}\`.`);
  const lines = [
    '"""Per-model input types: one TypedDict per model of the catalogue, Literal values, limits in the docstrings."""',
    '',
    LEAD.trim(),
    '',
    'from typing import Any, Literal, Required, TypedDict, Union',
    '',
    `ModelId = Literal[${modelIds.map(pyString).join(', ')}]`,
    '"""Every model id of the catalogue."""',
    '',
    `MODEL_IDS: tuple[str, ...] = (${modelIds.map(pyString).join(', ')},)`,
    '',
    types.render(),
    `ModelInput = Union[${modelIds.map(inputClass).join(', ')}]`,
    '"""The input of any model."""',
    '',
    'INPUT_TYPES: dict[str, Any] = {',
    ...modelIds.map((id) => `    ${pyString(id)}: ${inputClass(id)},`),
    '}',
    '"""The input TypedDict of each model id."""',
  ];
  return `${lines.join('\n')}\n`;
}

const inputClass = (id: string) => `${pyClassName(inputSchemaName(id).replace(/^Input_/, ''))}Input`;

function schemasModule(doc: Document): string {
  const types = new PythonTypes(doc.components.schemas, (name) => pyClassName(name));
  for (const name of reachableSchemas(doc)) {
    if (name.startsWith('Input_') || name.startsWith('CreateTaskRequest')) continue;
    types.named(name);
  }
  return [
    '"""The response models of /api/v1 (the `data` of each answer), as TypedDicts with the wire names."""',
    '',
    LEAD.trim(),
    '',
    'from typing import Any, Literal, Required, TypedDict, Union',
    '',
    types.render(),
  ].join('\n');
}

function operationsModule(doc: Document): string {
  const rows: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/v1/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method) || !op.operationId || op['x-internal']) continue;
      rows.push(`    ${pyString(op.operationId)}: (${pyString(method.toUpperCase())}, ${pyString(path)}),`);
    }
  }
  rows.sort();
  return [
    '"""Every /api/v1 operation: operationId -> (HTTP method, path template). The hand-written core sends by operationId."""',
    '',
    LEAD.trim(),
    '',
    'OPERATIONS: dict[str, tuple[str, str]] = {',
    ...rows,
    '}',
    '',
  ].join('\n');
}

function errorsModule(codes: { code: number; name: string; http: number; messages: Record<string, string> }[]): string {
  const sorted = [...codes].sort((a, b) => a.code - b.code);
  return [
    '"""The business codes of spec/errors.yaml: code -> (name, HTTP status, English message)."""',
    '',
    LEAD.trim(),
    '',
    'from typing import Literal',
    '',
    'ERROR_CODES: dict[int, tuple[str, int, str]] = {',
    ...sorted.map((c) => `    ${c.code}: (${pyString(c.name)}, ${c.http}, ${pyString(c.messages.en ?? '')}),`),
    '}',
    '',
    `ErrorName = Literal[${sorted.map((c) => pyString(c.name)).join(', ')}]`,
    '"""Every business code\'s name."""',
    '',
  ].join('\n');
}

/**
 * The typed entry points of tasks.quote / create / create_and_wait: one @overload per model, so a
 * type checker reads `input` by `model`. The implementations (`_quote`, `_create`,
 * `_create_and_wait`) are the hand-written core's (mediaforge/_tasks.py).
 */
function tasksModule(modelIds: string[], kind: 'sync' | 'async'): string {
  const a = kind === 'async' ? 'async ' : '';
  const aw = kind === 'async' ? 'await ' : '';
  const cls = kind === 'async' ? 'AsyncTypedTasks' : 'TypedTasks';
  const common =
    'callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None';
  const createExtra =
    'wait: int | bool | None = None, idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None';
  const cawExtra =
    'idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None';
  const out: string[] = [
    `"""Per-model typed overloads of the ${kind} tasks resource (generated; the bodies are in mediaforge/_tasks.py)."""`,
    '',
    LEAD.trim(),
    '',
    'from typing import Any, Literal, overload',
    '',
    'from . import models as m',
    'from .schemas import Quote, TaskRecord',
    '',
    '',
    `class ${cls}:`,
    `    """quote, create and create_and_wait, typed per model: \`input\` is the model's TypedDict."""`,
    '',
  ];
  const method = (name: string, extra: string, impl: string) => {
    const result = name === 'quote' ? 'Quote' : 'TaskRecord';
    for (const id of modelIds)
      out.push(
        '    @overload',
        `    ${a}def ${name}(self, *, model: Literal[${pyString(id)}], input: m.${inputClass(id)}, ${common}, ${extra}) -> ${result}: ...`,
      );
    out.push(
      `    ${a}def ${name}(self, *, model: str, input: Any, ${common}, ${extra}) -> ${result}:`,
      `        return ${aw}self.${impl}(model=model, input=input, callback_url=callback_url, quote_id=quote_id, expected_credits=expected_credits, expected_cost=expected_cost, ${extra
        .split(', ')
        .map((p) => p.split(':')[0])
        .map((p) => `${p}=${p}`)
        .join(', ')})`,
      '',
      `    ${a}def ${impl}(self, *, model: str, input: Any, ${common}, ${extra}) -> ${result}:`,
      '        raise NotImplementedError',
      '',
    );
  };
  method('quote', 'timeout: float | None = None', '_quote');
  method('create', createExtra, '_create');
  method('create_and_wait', cawExtra, '_create_and_wait');
  return `${out.join('\n')}\n`;
}

/**
 * clients/python/src/mediaforge/_generated/: the generated half of the Python client, from the same
 * merged document as the TypeScript SDK types (a model added as one YAML file gets its TypedDict
 * and its overloads with no other edit), and the business codes of spec/errors.yaml.
 */
export const pythonClientPlugin: Plugin = {
  name: 'python-client',
  dependsOn: ['openapi'],
  emit: ({ emitted, catalogue }) => {
    const doc = JSON.parse(emitted.get('openapi.json')!.contents) as Document;
    const modelIds = catalogue.models.map((model) => model.id).sort();
    for (const id of modelIds)
      if (!doc.components.schemas[inputSchemaName(id)] || !doc.components.schemas[createRequestSchemaName(id)])
        throw new Error(`python-client: the merged document has no input schema for ${id}`);
    const file = (name: string, contents: string, inputs: string[]): GeneratedFile => ({
      path: `${PYTHON_PREFIX}${name}`,
      contents,
      inputs,
    });
    const doc_ = ['generated/openapi.json'];
    return [
      file('__init__.py', '"""The generated half of the mediaforge client (npm run generate)."""\n', doc_),
      file('models.py', modelsModule(doc, modelIds), doc_),
      file('schemas.py', schemasModule(doc), doc_),
      file('operations.py', operationsModule(doc), doc_),
      file('errors.py', errorsModule(catalogue.errors.codes), ['spec/errors.yaml']),
      file('tasks.py', tasksModule(modelIds, 'sync'), doc_),
      file('async_tasks.py', tasksModule(modelIds, 'async'), doc_),
    ];
  },
};
