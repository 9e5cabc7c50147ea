import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The loopback https listeners' certificate (support/tls/: self-signed with openssl for localhost
 * and 127.0.0.1, how to make it again is in its README). Processes trust it the standard way,
 * through NODE_EXTRA_CA_CERTS, which Node reads once at start-up: it cannot be switched on from
 * inside a running test, so it is set in the environment of the processes about to start
 * (vitest.config.ts for the test processes and every service they spawn; a bench for its service).
 */
const certificatePath = fileURLToPath(new URL('./tls/loopback.crt', import.meta.url));

/** The key and certificate for `https.createServer`. */
export function loopbackTls(): { key: Buffer; cert: Buffer } {
  return {
    key: readFileSync(new URL('./tls/loopback.key', import.meta.url)),
    cert: readFileSync(certificatePath),
  };
}

/**
 * A NODE_EXTRA_CA_CERTS value that trusts the fixture certificate and whatever `current` (the
 * variable's value already, if any: some machines set it to the system bundle) trusted: the
 * fixture alone, `current` itself when it holds the fixture already, or both in one file under the
 * temporary folder, named by its contents.
 */
export function extraCaCertificates(current = process.env.NODE_EXTRA_CA_CERTS): string {
  if (!current) return certificatePath;
  const trusted = readFileSync(current, 'utf8');
  const fixture = readFileSync(certificatePath, 'utf8');
  if (trusted.includes(fixture.trim())) return current;
  const bundle = `${trusted.trimEnd()}\n${fixture}`;
  const path = join(tmpdir(), `mediaforge-ca-${createHash('sha256').update(bundle).digest('hex').slice(0, 16)}.pem`);
  writeFileSync(path, bundle);
  return path;
}
