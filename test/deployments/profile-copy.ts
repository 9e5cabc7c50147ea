import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from '../../generator/generate.js';
import { copyCheckout } from '../support/spec-copy.js';
import { type MediaforgeProcess, startMediaforge } from './support.js';

/** A serve process of a copy of the checkout, an account's key on it, and the one stop for both. */
export interface ServedCopy {
  /** The copy's root, where `mediaforge` commands of the copy run. */
  root: string;
  service: MediaforgeProcess;
  key: string;
  /** Stops the process, then removes the copy. */
  stop(): Promise<void>;
}

/**
 * A maintainer's new provider: a copy of the checkout (test/support/spec-copy.ts) with `profiles`
 * written under spec/providers/ (file name to YAML) and generated, served by `mediaforge serve` from
 * that copy with `deployments` (polled every 100 ms unless `env` says otherwise), and an account
 * holding 10,000 credits.
 */
export async function serveWithProfiles(
  name: string,
  profiles: Record<string, string>,
  deployments: string,
  env: NodeJS.ProcessEnv,
): Promise<ServedCopy> {
  const copy = copyCheckout();
  let service: MediaforgeProcess | undefined;
  try {
    for (const [file, text] of Object.entries(profiles)) writeFileSync(join(copy.root, 'spec/providers', file), text);
    await generate(copy.root);
    service = await startMediaforge(
      name,
      { MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml', MEDIAFORGE_UPSTREAM_POLL_MS: '100', ...env },
      { 'deployments.yaml': deployments },
      copy.root,
    );
    const key = (await service.account(10_000)).apiKey;
    const started = service;
    return {
      root: copy.root,
      service,
      key,
      async stop() {
        await started.stop();
        copy.remove();
      },
    };
  } catch (error) {
    await service?.stop();
    copy.remove();
    throw error;
  }
}
