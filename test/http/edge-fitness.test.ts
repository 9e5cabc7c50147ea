import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { tsFiles } from '../support/source-files.js';

/** Every .ts file under a directory of the checkout, as paths relative to the root (with `/`). */
/** The files under `dir` whose text matches `pattern`, apart from `allowed` (prefixes). */
function offenders(dir: string, pattern: RegExp, allowed: readonly string[] = []): string[] {
  return tsFiles(dir).filter(
    (file) =>
      !allowed.some((prefix) => file.startsWith(prefix)) && pattern.test(readFileSync(join(ROOT, file), 'utf8')),
  );
}

/** An ApiError built with positional placeholders: an empty params object or field list before the part that matters. */
const POSITIONAL_API_ERROR = /new ApiError\([^;]*?,\s*(?:\{\s*\}|\[\s*\])\s*,/;

/** A module that answers HTTP: it registers a Fastify route, or implements operations of the generated Handlers. */
const HANDLER =
  /\b(?:app|scope)\.(?:get|post|put|patch|delete|route)\(|\b(?:sessionRoute|authRoute)\(app\b|\bHandlers<\w+>\s*[=,>]/;

/** A request part handed to a handler untyped: the shape of the console's old sessionRoute and authRoute. */
const UNTYPED_INPUT = /\b(?:body|query|params)\??\s*:\s*Record<string,\s*(?:unknown|string)>/;

/** A hand-written check of the createTask envelope: a list of its fields, a typeof on a body field, a field issue built there. */
const ENVELOPE_CHECK =
  /BODY_FIELDS|typeof\s+\w+\.(?:model|input|callBackUrl|quoteId|expectedCredits|expectedCost)\b|fieldIssue\(/g;

/**
 * A hand-written check of createVideo's envelope (its compat fields and the body itself): a typeof on
 * model, seconds, size, input_reference (or its image_url, file_id) or on the body, or the old
 * parsers of seconds and input_reference.
 */
const COMPAT_ENVELOPE_CHECK =
  /typeof\s+[\w.]*(?:\.|\b)(?:model|seconds|size|input_reference|image_url|imageUrl|file_id|fileId|body)\b|\b(?:parseSeconds|parseReference)\b/g;

describe('one HTTP edge (issue 26, step 1)', () => {
  it('no handler receives Record<string, unknown>: the parts come typed from the contract (ApiRequest<Op>)', () => {
    expect([
      ...offenders('runtime/http', UNTYPED_INPUT, ['runtime/http/request-input.ts']),
      ...offenders('runtime/console', UNTYPED_INPUT, ['runtime/console/web/']),
    ]).toEqual([]);
  });

  it('every handler lives under runtime/http/routes/ (app.ts only binds the route table)', () => {
    expect(offenders('runtime', HANDLER, ['runtime/http/routes/', 'runtime/http/app.ts'])).toEqual([]);
  });

  it('ApiError takes an options object: no positional `{}, []` placeholders', () => {
    expect(offenders('runtime', POSITIONAL_API_ERROR)).toEqual([]);
  });

  it('prepare-request.ts no longer checks the envelope: the contract does (generated/requests/)', () => {
    const text = readFileSync(join(ROOT, 'runtime/tasks/prepare-request.ts'), 'utf8');
    expect(text.match(ENVELOPE_CHECK) ?? []).toEqual([]);
  });

  it.each(['runtime/compat/video-request.ts', 'runtime/http/routes/compat.ts'])(
    '%s no longer checks the compat envelope: the contract does (CreateVideoRequest, generated/requests/)',
    (file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text.match(COMPAT_ENVELOPE_CHECK) ?? []).toEqual([]);
    },
  );

  it('the patterns catch what they are meant to (the checks are not vacuous)', () => {
    expect("if (raw.model !== undefined && (typeof raw.model !== 'string'))").toMatch(COMPAT_ENVELOPE_CHECK);
    expect("const given = typeof raw.size === 'string' ? raw.size : String(raw.size);").toMatch(COMPAT_ENVELOPE_CHECK);
    expect("if (typeof value.input_reference === 'object')").toMatch(COMPAT_ENVELOPE_CHECK);
    expect("if (typeof imageUrl !== 'string' || imageUrl.length === 0)").toMatch(COMPAT_ENVELOPE_CHECK);
    expect("if (typeof body !== 'object' || body === null)").toMatch(COMPAT_ENVELOPE_CHECK);
    expect('const seconds = parseSeconds(raw.seconds);').toMatch(COMPAT_ENVELOPE_CHECK);
    expect("if (typeof request.isMultipart === 'function')").not.toMatch(COMPAT_ENVELOPE_CHECK);
    expect("if (typeof value === 'object' && value !== null)").not.toMatch(COMPAT_ENVELOPE_CHECK);
    expect('input.duration_seconds = Number(raw.seconds);').not.toMatch(COMPAT_ENVELOPE_CHECK);
    expect("const BODY_FIELDS = new Set(['model']);").toMatch(ENVELOPE_CHECK);
    expect("if (typeof b.model !== 'string')").toMatch(ENVELOPE_CHECK);
    expect("issues.push(fieldIssue('quoteId', 'type', 'type'));").toMatch(ENVELOPE_CHECK);
    expect('const model = catalogue.get(body.model);').not.toMatch(ENVELOPE_CHECK);
    expect(UNTYPED_INPUT.test('  body: Record<string, unknown>;')).toBe(true);
    expect(UNTYPED_INPUT.test('  params: Record<string, string>;')).toBe(true);
    expect(UNTYPED_INPUT.test('type AuthRun = (body: Record<string, unknown>, request: FastifyRequest)')).toBe(true);
    expect(UNTYPED_INPUT.test('function playgroundBody(body: { model: string; input: Record<string, unknown> })')).toBe(
      false,
    );
    expect(HANDLER.test("app.get('/healthz', async () => ({ status: 'ok' }));")).toBe(true);
    expect(HANDLER.test('  app.route({ method, url,')).toBe(true);
    expect(HANDLER.test('export const fileHandlers: Pick<Handlers<ApiRequests>, ')).toBe(true);
    expect(HANDLER.test('export function createHandlers(): Handlers<ApiRequests> {')).toBe(false);
    expect(POSITIONAL_API_ERROR.test("throw new ApiError('task_not_found', {}, [], 'taskId');")).toBe(true);
    expect(POSITIONAL_API_ERROR.test("new ApiError('invalid_parameter', { param: 'x' }, [], 'x')")).toBe(true);
    expect(POSITIONAL_API_ERROR.test("throw new ApiError('invalid_parameter', { param: 'taskId' });")).toBe(false);
  });
});
