/**
 * What the behaviour suite (../adapter-behaviour.test.ts) needs of one adapter: how to start its
 * loopback protocol server (support/upstreams/) with the suite's faults, how the deployments file
 * names it, the reasons its protocol gives, and which scenarios its protocol cannot express, each
 * with why. The adapters are the rows of one table (./adapters.ts), keyed by kind: a profile added
 * under spec/providers/ is found by the suite, which fails until the table has its row.
 */

/** A submit answered instead of creating a job: busy (429, or the protocol's busy code), busy with Retry-After, the key refused, the request refused. */
export type SubmitFault = 'busy' | 'busy-retry-after' | 'unauthorized' | 'refused';

/** One job's own clock on the server (support/upstreams/loopback-upstream.ts clockFor). */
export interface JobClock {
  latencyMs?: number;
  queuedMs?: number;
  /** Both servers' names for how long a result link answers after the job ended. */
  resultLifetimeMs?: number;
  outputLifetimeMs?: number;
}

/** What the suite asks of a server it starts: every answer decided by the request's body (the scenario's marker in its prompt). */
export interface Faults {
  /** The key requests must carry. */
  key: string;
  submitFault(body: unknown): SubmitFault | undefined;
  /** A job whose prompt contains this fails at the provider (its own reason). */
  failMarker: string;
  clockFor(body: unknown): JobClock | undefined;
}

/** A job as the server holds it. */
export interface ServerJob {
  id: string;
  body: unknown;
  canceledAt?: number;
}

/** A started loopback server, as the suite reads it. */
export interface Loopback {
  /** The baseUrl an operator writes. */
  baseUrl: string;
  /** Every submit body that reached it, refused or not. */
  submits(): unknown[];
  jobs(): ServerJob[];
  /** Ids of the jobs a cancel stopped. */
  cancels(): string[];
  /** Ids of the jobs whose cancel the server refused (they run on). */
  refusedCancels(): string[];
  close(): Promise<void>;
}

/** What the suite reads of a started server besides its baseUrl; a protocol without cancels leaves those out. */
export type Reads = Pick<Loopback, 'submits' | 'jobs'> & Partial<Pick<Loopback, 'cancels' | 'refusedCancels'>>;

/** A started server as the suite reads it. */
const loopback = (
  server: { close(): Promise<void> },
  { baseUrl, ...reads }: Reads & { baseUrl: string },
): Loopback => ({
  baseUrl,
  cancels: () => [],
  refusedCancels: () => [],
  ...reads,
  close: () => server.close(),
});

export type Scenario =
  | 'success'
  | 'failure'
  | 'busy failover'
  | 'unauthorized failover'
  | 'refusal'
  | 'retry-after'
  | 'deadline with a cancel'
  | 'deadline without a cancel'
  | 'provider cancel'
  | 'expired link'
  | 'sigkill'
  | 'reconciliation';

export interface BehaviourAdapter {
  /** The deployments file's kind of upstream (the row's key in ./adapters.ts). */
  kind: string;
  /** The catalogue model the suite routes to this adapter alone (text to video; no two adapters share one). */
  model: string;
  upstreamModel: string;
  /** The task's input besides its prompt, where the model's defaults are not what the provider takes. */
  input?: Record<string, unknown>;
  /** The value of the deployments file's secret variable for a server started with `key` (default: the key itself). */
  secret?(key: string): string;
  start(faults: Faults): Promise<Loopback>;
  /** The provider's reason for a job that failed at its end (failMarker), as the task's message carries it. */
  failReason: string;
  /** The provider's reason for a refused submit. */
  refusalReason: string;
  /** What the protocol's cancel does: stops a queued job only, any running job, or there is none. */
  cancel: 'queued only' | 'any' | 'none';
  /** Scenarios the protocol cannot express, each with why. */
  unsupported: Partial<Record<Scenario, string>>;
}

/** Whether a request body carries a scenario's marker (its prompt, wherever the protocol puts it). */
export const carries = (body: unknown, marker: string) => JSON.stringify(body ?? null).includes(marker);

/** The options every server takes from the suite's faults: its key, the submit hook, the failure marker, the jobs' clocks. */
function serverFaults<A>(faults: Faults, answer: (fault: SubmitFault) => A) {
  return {
    apiKey: faults.key,
    submit: (_index: number, body: Record<string, unknown>) => {
      const fault = faults.submitFault(body);
      return fault && answer(fault);
    },
    failWhenPromptContains: faults.failMarker,
    clockFor: (job: { body?: unknown }) => faults.clockFor(job.body),
  };
}

/** The options a row's server is opened with (every vendor server takes these, Kling's key aside). */
export type ServerFaults<A> = ReturnType<typeof serverFaults<A>>;

/**
 * One adapter as its row in ./adapters.ts describes it: what is the vendor's own (its server, how
 * the suite reads that server, its answers to a faulted submit) besides what the suite reads of
 * every adapter. `answers` is the vendor's table of answers, or, where the server builds them
 * (Kling's envelopes), a function of the started server.
 */
export interface AdapterRow<S extends { close(): Promise<void> }, A> extends Omit<BehaviourAdapter, 'kind' | 'start'> {
  open(options: ServerFaults<A>): Promise<S>;
  reads(server: S): Reads & { baseUrl: string };
  answers: Record<SubmitFault, A> | ((fault: SubmitFault, server: S) => A);
}

/** A row as the suite runs it: start() opens the row's server with the suite's faults and reads it the row's way. */
export function adapterRow<S extends { close(): Promise<void> }, A>({
  open,
  reads,
  answers,
  ...described
}: AdapterRow<S, A>): Omit<BehaviourAdapter, 'kind'> {
  return {
    ...described,
    async start(faults) {
      // The answers are asked for at a submit, when the server has started.
      const answer = (fault: SubmitFault) => (typeof answers === 'function' ? answers(fault, server) : answers[fault]);
      const server: S = await open(serverFaults(faults, answer));
      return loopback(server, reads(server));
    },
  };
}
