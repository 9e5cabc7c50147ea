import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { tsFiles } from '../support/source-files.js';

/**
 * Tests and benchmarks verify TLS as a user's process does: a loopback https listener's
 * certificate is trusted through NODE_EXTRA_CA_CERTS or a `ca` option (support/loopback-tls.ts),
 * never by switching verification off, which would also let a broken certificate check in the
 * service's own outbound code pass unnoticed.
 */
const VERIFICATION_OFF = [/NODE_TLS_REJECT_UNAUTHORIZED/, /rejectUnauthorized\s*:\s*false/];

const turnsVerificationOff = (text: string): boolean => VERIFICATION_OFF.some((pattern) => pattern.test(text));

describe('no test, benchmark or runtime code turns TLS verification off', () => {
  it.each([
    ['the environment switch', { given: "process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';", want: true }],
    ['in a spawned environment', { given: "env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' }", want: true }],
    ['an agent option', { given: 'httpsGet(url, { rejectUnauthorized: false }, cb)', want: true }],
    ['the fixture as the trusted CA', { given: 'httpsGet(url, { ca: loopbackTls().cert }, cb)', want: false }],
  ])('the detector: %s', (_name, { given, want }) => {
    expect(turnsVerificationOff(given)).toBe(want);
  });

  it('holds for runtime/, support/, bench/ and test/', () => {
    const self = 'test/composition/verified-tls.test.ts';
    const offenders = ['runtime', 'support', 'bench', 'test']
      .flatMap(tsFiles)
      .filter((file) => file !== self && turnsVerificationOff(readFileSync(join(ROOT, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
