import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH, tooDeepPath } from '../../generated/support.js';
import { fieldIssue, invalidInput } from '../errors.js';

/**
 * JSON bodies: Fastify's own parser (a `__proto__` or `constructor.prototype` key refuses the
 * body), then a bound on nesting. A body nested deeper than MAX_JSON_DEPTH levels is a 400 40001
 * naming the path where it went too deep, before any handler, validator or fingerprint walks it
 * (a 1 MiB body can nest half a million levels; recursive walks would overflow the stack).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value) => {
      if (error) return done(error, undefined);
      const path = tooDeepPath(value, MAX_JSON_DEPTH, '');
      if (path !== undefined)
        return done(invalidInput([fieldIssue(path, 'max_depth', 'max_depth', { limit: MAX_JSON_DEPTH })]), undefined);
      done(null, value);
    });
  });
}
