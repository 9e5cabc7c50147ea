import type { ProbeResult } from '../deployments/deployment.js';
import type { Deployments } from './router.js';

/** One upstream's probe, as `serve` logs it and `deployments check --probe` prints it. */
export interface UpstreamProbe extends ProbeResult {
  deployment: string;
  kind: string;
}

/**
 * Asks every upstream that has a probe (a request that creates nothing) whether it is reachable,
 * takes the key and answers at its path, all at once. The simulator has nothing to probe. What
 * comes back has passed the deployment's redactor: the key never appears in it.
 */
export async function probeUpstreams(deployments: Deployments): Promise<UpstreamProbe[]> {
  const probed = deployments
    .list()
    .flatMap((deployment) =>
      deployment.probe
        ? [
            deployment
              .probe(deployments.upstreamModelsAt(deployment.name)[0])
              .then((found) => ({ ...found, deployment: deployment.name, kind: deployment.kind ?? 'upstream' })),
          ]
        : [],
    );
  return Promise.all(probed);
}

/** What each outcome asks of the operator, after the line's facts. */
const ADVICE: Record<ProbeResult['outcome'], string> = {
  ok: '',
  unreachable: ': check baseUrl and that the upstream is up',
  'key refused': ': check the key in its secretEnv variable',
  'wrong path': ': check the path of baseUrl (for instance /v1 or /api/v1)',
  failed: '',
  'not probed': '',
};

/** Whether a probe found the operator's settings wrong: a profile that has no probe found nothing (serve logs it at info). */
export function probeFailed(probe: ProbeResult): boolean {
  return !probe.ok && probe.outcome !== 'not probed';
}

/** `upstream relay (jobs): key refused (GET /api/v1/jobs: status 401): check the key ...`; names the deployment, never the key. */
export function probeLine(probe: UpstreamProbe): string {
  return `upstream ${probe.deployment} (${probe.kind}): ${probe.outcome} (${probe.detail})${ADVICE[probe.outcome]}`;
}
