import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import type { ModelInfo } from '../../generated/catalogue.js';
import type { Deployment, DeploymentJob, DeploymentStatus } from '../../runtime/deployments/deployment.js';
import { SimulatorDeployment } from '../../runtime/simulator/simulator.js';
import { TEST_DB } from '../support/service.js';

export const FAIL = 'FAIL-THIS-PROMPT';

/**
 * The simulator behind a gate: a task stays `running` until the test releases it, then the
 * simulator answers (its fail trigger and its -1 length choice included). With a ManualClock and a
 * worker driven by hand, which task ends when is decided by the test alone.
 */
export class GatedDeployment implements Deployment {
  readonly name = 'gated';
  readonly released = new Set<string>();
  private readonly simulator: SimulatorDeployment;
  constructor(now: () => number) {
    this.simulator = new SimulatorDeployment({ latencyMs: 0, failWhenPromptContains: FAIL, now });
  }
  accepts(_model: ModelInfo): boolean {
    return true;
  }
  isAvailable(): boolean {
    return true;
  }
  async start(job: DeploymentJob): Promise<string> {
    return `gated:${job.taskId}`;
  }
  async poll(_handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    if (!this.released.has(job.taskId)) return { state: 'running', progress: 10, retryAfterMs: 20 };
    return this.simulator.poll('sim:0', job);
  }
}

/** A deployment that accepts work and never answers (deadline tests). */
export class SilentDeployment implements Deployment {
  readonly name = 'silent';
  polls = 0;
  accepts(): boolean {
    return true;
  }
  isAvailable(): boolean {
    return true;
  }
  async start(job: DeploymentJob): Promise<string> {
    return `silent:${job.taskId}`;
  }
  poll(): Promise<DeploymentStatus> {
    this.polls++;
    return new Promise(() => {});
  }
}

/** The length the simulator picks for duration -1 on a 4..15 s model (as in simulator.ts). */
export function simulatorAutoSeconds(taskId: string, min = 4, max = 15): number {
  return min + (createHash('sha256').update(taskId).digest().readUInt32BE(0) % (max - min + 1));
}

/** Counts of one suite for docs/reliability.md, appended to test-artifacts/reliability-counts.jsonl. */
export function recordCounts(suite: string, counts: Record<string, number>): void {
  mkdirSync('test-artifacts', { recursive: true });
  // The database too: the same suites run on SQLite and, with MEDIAFORGE_TEST_PG, on PostgreSQL.
  appendFileSync(
    'test-artifacts/reliability-counts.jsonl',
    `${JSON.stringify({ suite, db: TEST_DB, at: new Date().toISOString(), ...counts })}\n`,
  );
  console.log(`[reliability] ${suite} (${TEST_DB}): ${JSON.stringify(counts)}`);
}

/** A real server process (`node bin/mediaforge.js serve`), resolved once it listens. */
export interface ServerProcess {
  child: import('node:child_process').ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

export async function spawnServer(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  /** Another checkout to run (a copy with its own generated/); this one by default. */
  cwd?: string,
): Promise<ServerProcess> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['bin/mediaforge.js', 'serve', '--port', '0', '--migrate', ...args], {
    env: { ...process.env, ...env },
    ...(cwd ? { cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /mediaforge listening on (http:\/\/\S+)/.exec(output);
      if (listening) resolve(listening[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited.then((code) => reject(new Error(`server exited with ${code}: ${output.slice(-2000)}`)));
  });
  return { child, url, output: () => output, exited };
}
