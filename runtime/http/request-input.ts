import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import type { BodyIssue, ParameterRule, RequestRules } from '../../generated/requests/index.js';
import type { RequestValidator } from '../../generated/requests/validators.js';
import { mapAjvErrors, type FieldIssue } from '../../generated/support.js';
import { ApiError, invalidInput } from '../errors.js';

/** The parts of a request after the contract's checks: defaults filled in, integers read as numbers. */
export interface RequestInput {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** A decimal integer as a URL or header carries it; `1e1`, `0x10`, ` 5` and `5.0` are not one. */
const DECIMAL_INTEGER = /^-?\d{1,15}$/;

/**
 * Checks an operation's path, query and header parameters and its JSON body against the generated
 * validators of the contract (`rules`: generated/requests/ or generated/console/requests/), in that
 * order. A bad parameter is one error naming it, with the business code the contract gives it
 * (invalid_parameter unless `x-error` says otherwise); a bad body is invalid_input with every
 * problem (or the body's own `x-error`, naming the first).
 */
export function readRequestInput(rules: RequestRules, request: FastifyRequest): RequestInput {
  const path = check(
    rules,
    'path',
    rules.path,
    collect(rules.parameters, 'path', (name) => (request.params as Record<string, unknown>)[name]),
  );
  const query = check(
    rules,
    'query',
    rules.query,
    collect(rules.parameters, 'query', (name) => (request.query as Record<string, unknown>)[name]),
  );
  const headers = check(
    rules,
    'header',
    rules.headers,
    collect(rules.parameters, 'header', (name) => request.headers[name.toLowerCase()]),
  );
  const body = request.body;
  // A multipart body is a stream of parts only its handler reads: it checks the fields it read (checkBody).
  const multipart = typeof request.isMultipart === 'function' && request.isMultipart();
  if (rules.body && !multipart && (body !== undefined || rules.body.required)) checkBody(rules.body, body);
  return { path, query, headers, body };
}

/**
 * Checks a body against the contract's rule for it (`rules.body`): invalid_input with every
 * problem, or the body's own `x-error` naming the first. Run for every JSON body above; a handler
 * that reads a multipart form runs it on the fields it read (createVideo).
 */
export function checkBody(rule: NonNullable<RequestRules['body']>, body: unknown): void {
  const { validate, error, issues: overrides, order } = rule;
  if (validate(body)) return;
  const issues = bodyIssues(validate, overrides ?? {}, order);
  if (error === 'invalid_input') throw invalidInput(issues);
  throw new ApiError(error, { param: issues[0].path });
}

/** The declared parameters of one kind, by contract name: the first of repeated values, integers as numbers. */
function collect(
  parameters: readonly ParameterRule[],
  where: ParameterRule['in'],
  read: (name: string) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const param of parameters) {
    if (param.in !== where) continue;
    let value = read(param.name);
    if (Array.isArray(value)) value = value[0];
    if (value === undefined) continue;
    out[param.name] = param.integer && typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : value;
  }
  return out;
}

function check(
  rules: RequestRules,
  where: ParameterRule['in'],
  validate: RequestValidator | undefined,
  values: Record<string, unknown>,
): Record<string, unknown> {
  if (!validate || validate(values)) return values;
  const first = validate.errors?.[0];
  const name =
    first?.keyword === 'required'
      ? String(first.params.missingProperty)
      : decodePointer(first?.instancePath.split('/')[1] ?? '');
  const rule = rules.parameters.find((p) => p.in === where && p.name === name);
  throw new ApiError(rule?.error ?? 'invalid_parameter', { param: name });
}

/**
 * ajv's problems as field issues named from the body's top (`taskId`; `body` for the body itself):
 * unknown fields first, then one problem per field (an empty name is too short, not also unmatched).
 * A problem under a schema the contract gives an `x-issue` (`overrides`, by schema path; the innermost
 * wins) answers with its rule and message;
 * `order`, where given, lists the other problems field by field.
 */
function bodyIssues(
  validate: RequestValidator,
  overrides: Readonly<Record<string, BodyIssue>>,
  order?: readonly string[],
): FieldIssue[] {
  // One error at a time, so that each issue keeps its error's schema path (duplicates go below).
  // ajv's `if` error only says that its `then` failed; the `then` branch's own errors name the field.
  const errors = (validate.errors ?? []).filter((error) => error.keyword !== 'if');
  const issues = errors.flatMap((error) =>
    mapAjvErrors([error], {}, {}).map((issue) => ({ issue, override: overrideOf(error.schemaPath, overrides) })),
  );
  const named = issues.map(({ issue, override }) => {
    const path = issue.path === 'input' ? 'body' : issue.path.replace(/^input\./, '');
    const rule = override?.rule ?? issue.rule;
    const key = override?.key ?? issue.message.key;
    return { path, rule, message: { key, params: { ...issue.message.params, ...override?.params, field: path } } };
  });
  const known = named.filter((i) => i.rule !== 'unknown_field');
  // Where the rules give the fields' order, a missing field is listed in its place, not before the others.
  if (order) known.sort((a, b) => order.indexOf(a.path.split(/[.[]/)[0]) - order.indexOf(b.path.split(/[.[]/)[0]));
  const ordered = [...named.filter((i) => i.rule === 'unknown_field'), ...known];
  return ordered.filter((issue, index) => ordered.findIndex((other) => other.path === issue.path) === index);
}

/** The x-issue of the innermost schema an ajv schema path is under (`#/properties/model/minLength`), if any. */
function overrideOf(schemaPath: string, overrides: Readonly<Record<string, BodyIssue>>): BodyIssue | undefined {
  let found: [string, BodyIssue] | undefined;
  for (const [at, override] of Object.entries(overrides))
    if (schemaPath.startsWith(`${at}/`) && at.length > (found?.[0].length ?? -1)) found = [at, override];
  return found?.[1];
}

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
