import { describe, expect, it } from 'vitest';
import consoleDoc from '../../../generated/console/openapi.json' with { type: 'json' };
import { requestRules } from '../../../generated/console/requests/index.js';
import * as validators from '../../../generated/console/requests/validators.js';
import { routes } from '../../../generated/console/routes.js';

interface Operation {
  operationId: string;
  security?: unknown[];
  'x-bound-by'?: string;
}
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(consoleDoc.paths as unknown as Record<string, Record<string, Operation>>).flatMap(
  ([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase(), operation: item[m] })),
);
const byId = (a: { operationId: string }, b: { operationId: string }) => (a.operationId < b.operationId ? -1 : 1);

describe("routes and requests plugins: the console's table (generated/console/)", () => {
  it('has one route per operation of the internal document (but those bound by their own scope), all in the console layer', () => {
    const want = operations
      .filter(({ operation }) => !operation['x-bound-by'])
      .map(({ path, method, operation }) => ({
        operationId: operation.operationId,
        method,
        path,
        layer: 'console',
      }));
    const got = routes.map(({ operationId, method, path, layer }) => ({ operationId, method, path, layer }));
    expect([...got].sort(byId)).toEqual([...want].sort(byId));
  });

  it('asks for a session on every operation but those marked `security: []` (sign-up and sign-in)', () => {
    expect(
      routes
        .filter((r) => !r.auth)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(['consoleSignIn', 'consoleSignUp']);
  });

  it('checks the bodies and parameters the contract states', () => {
    expect(requestRules.consoleAddEndpoint.body?.validate).toBe(validators.consoleAddEndpointBody);
    expect(validators.consoleAddEndpointBody({ url: 'https://example.invalid/', events: ['task.completed'] })).toBe(
      true,
    );
    expect(validators.consoleAddEndpointBody({ events: ['task.completed'] })).toBe(false);
    expect(validators.consoleSaveSettingsBody({ payloadVersion: 3 })).toBe(false);
    expect(requestRules.playgroundUpload.query).toBe(validators.playgroundUploadQuery);
    expect(validators.playgroundUploadQuery({ field: 'image' })).toBe(false);
    expect(requestRules.consoleSignOut.body).toBeUndefined();
  });
});
