import type { ModelInfo } from '../../generated/catalogue.js';
import type { BlobSource } from '../blobs/blob-store.js';

/** What a deployment is asked to run: one task of one model. */
export interface DeploymentJob {
  taskId: string;
  model: ModelInfo;
  input: Record<string, unknown>;
  /** Length of the model's source clip when the service knows it (a task of the same key); a deployment measures URLs. */
  sourceClipSeconds?: number;
  /** The task's deadline (Unix ms): a provider that takes a time limit gets it from here. */
  deadlineAt?: number;
  /** The model's id at the upstream (the operator's `upstreamModel`; the catalogue id by default). */
  upstreamModel?: string;
  /**
   * The input with the service's own references made reachable from outside: `service://a/<id>`
   * assets and source clips named by task id become signed links to the service's media (valid
   * past the deadline). What an upstream is sent; the simulator reads `input`.
   */
  portableInput?: Record<string, unknown>;
  /** The upstream callback: where the upstream may report that the job ended (runtime/http/routes/upstream-callback.ts); set only for deployments with `callbacks`. Not the client's `callBackUrl`. */
  upstreamCallbackUrl?: string;
  /**
   * Ends the job's result downloads where they are: the worker's item was aborted (shutdown, its
   * lease taken over) or the task reached its deadline. Set by the poll; an adapter hands it to
   * every result stream it returns.
   */
  signal?: AbortSignal;
  /**
   * Ends a poll's own requests (the status request, a follow-up read of the result) where they
   * are: the worker's item aborted (shutdown, its lease taken over), or the task's deadline. Set by
   * the poll and the reconciliation; absent, only their timeouts bound them.
   */
  requestSignal?: AbortSignal;
}

export interface DeploymentOutput {
  /** The media: whole, or a stream (a provider's download), which the worker writes to the blob store as it reads. */
  bytes: BlobSource;
  mime: string;
  extension: string;
  /** The length of a video or sound, when the deployment knows it; absent for an image (a returned last frame), or for the worker to measure from the stored bytes (runtime/files/probe.ts). */
  durationSeconds?: number;
  /**
   * The SHA-256 (hex) of whole `bytes`, when the deployment hands the same file to many tasks and
   * knows it without reading them (the simulator's rendered clips): the store may keep one copy
   * for them all (BlobStore.putShared).
   */
  contentId?: string;
}

export type DeploymentStatus =
  | { state: 'running'; progress: number; retryAfterMs: number }
  /**
   * Billed reference clips are not the deployment's business: the service measured them before the
   * submit (runtime/assets/run-check.ts) and settles at those lengths.
   */
  | {
      state: 'succeeded';
      outputs: DeploymentOutput[];
      /** The billed output length; absent: the measured length of the first video output. */
      outputSeconds?: number;
      sourceClipSeconds?: number;
    }
  /**
   * `reason` is the model's own English text; the service strips identifiers before showing it.
   * `code` reference_invalid: a reference the deployment could not fetch or measure (the task's
   * error is then the service's reference_invalid with the reason as detail); else generation_failed.
   */
  | { state: 'failed'; reason: string; code?: 'reference_invalid' }
  /**
   * The provider canceled the job on its own side (the service asks for a cancel only once its task
   * ended, and then polls it no more as the task's poll). `reason`: the provider's own English text,
   * if any; the task fails with the service's sentence either way, its hold released.
   */
  | { state: 'canceled'; reason?: string };

/**
 * A place that runs generations: the simulator, or an adapter for a real provider (one upstream of
 * the operator's deployments file). Start returns a handle that survives restarts (it is stored on
 * the task, with the deployment's name: every later poll, download, cancel and callback goes to
 * this deployment); the worker polls it until it ends.
 *
 * Adapters say what went wrong by throwing UpstreamError (./upstream-error.ts): from `start`, its
 * class decides whether another deployment may be tried; from `poll`, `lost` fails the task and
 * anything else is tried again (after `retryAfterMs` when the upstream gave one).
 */
export interface Deployment {
  readonly name: string;
  /** The adapter: simulator, openai-videos, jobs, ... (status pages and metrics). */
  readonly kind?: string;
  /**
   * Runs in this process and never fails a call (the simulator): it is never cooling, so admission
   * (routing/availability.ts) answers without reading the health rows.
   */
  readonly inProcess?: boolean;
  accepts(model: ModelInfo): boolean;
  /** Whether this very input can go there (a model the protocol serves a subset of); true when absent. */
  acceptsInput?(model: ModelInfo, input: Record<string, unknown>): boolean;
  /** Where acceptsInput says no: the field and value it cannot take, and the values of that field it takes. */
  inputRefusal?(model: ModelInfo, input: Record<string, unknown>): InputRefusal | undefined;
  isAvailable(): boolean;
  start(job: DeploymentJob): Promise<string>;
  poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus>;
  /** How long after start a first poll can learn something (a provider's typical latency); 0 or absent: poll at once. */
  firstPollAfterMs?(job: DeploymentJob): number;
  /** Stops the upstream job of a task that ended first (deadline); absent where the protocol cannot. */
  cancel?(handle: string, job: DeploymentJob): Promise<void>;
  /** Frees what the upstream keeps once the result is stored (openai-videos: DELETE the video). */
  release?(handle: string, job: DeploymentJob): Promise<void>;
  /**
   * Whether a submit sent again after an unknown outcome (a timeout, a reset, a crash mid-submit)
   * is recognised by the upstream as the same job (an idempotency key): then the same deployment is
   * asked again; otherwise the task fails with its hold released rather than risk two jobs.
   */
  readonly idempotentSubmit?: boolean;
  /**
   * Where the protocol offers a way to find a job without its handle (a list of the key's jobs):
   * the job a submit whose outcome is unknown made, given when that submit was given up (Unix ms).
   * `absent`: the provider shows no such job; throws when it could not be asked. Absent where the
   * protocol has none: the possible job stays counted as possibly abandoned (runtime/worker/find-job.ts).
   */
  findJob?(job: DeploymentJob, givenUpAt: number): Promise<{ handle: string } | 'absent'>;
  /** How long a submit may wait for its answer (the upstream's `submitTimeoutSeconds`); past it the outcome is unknown. */
  readonly submitTimeoutMs?: number;
  /** Whether the upstream is handed a callback URL (job.upstreamCallbackUrl) to wake the task's poll. */
  readonly callbacks?: boolean;
  /**
   * How a task's external references reach the upstream (issue 37 point 3): `stored`, as signed
   * links to the copies the check lane fetched and measured (runtime/assets/reference-copies.ts);
   * `original`, as the customer's own URLs (the protocol's spec/providers file or the deployments
   * file says so). Absent: the deployment fetches no reference (the simulator).
   */
  readonly referenceLinks?: 'stored' | 'original';
  /**
   * Checks the upstream's own signature on an inbound callback (asked only once the URL's token
   * holds); absent: the token suffices. May be asynchronous: a provider's signing secret may have
   * to be fetched first (Replicate: GET /webhooks/default/secret).
   */
  verifyCallback?(request: {
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }): boolean | Promise<boolean>;
  /**
   * Asks the upstream something that creates nothing, to learn whether it is reachable, takes the
   * key and answers at the configured path; absent where the protocol has no such request.
   * `upstreamModel`: a model routed to it (fal's queue paths are per app).
   */
  probe?(upstreamModel?: string): Promise<ProbeResult>;
  /** Closes its connections (service shutdown). */
  close?(): void;
}

/** What a probe concluded: the upstream answered as expected, or which of the operator's settings is likely wrong. */
/** `not probed`: the protocol has no request that creates nothing (a profile without `probe`): nothing was asked, nothing failed. */
export type ProbeOutcome = 'ok' | 'unreachable' | 'key refused' | 'wrong path' | 'failed' | 'not probed';

/** What an upstream's probe found (a request that creates nothing: reachable, key accepted, path right). */
export interface ProbeResult {
  ok: boolean;
  outcome: ProbeOutcome;
  /** The answer's HTTP status, when one came. */
  status?: number;
  detail: string;
}

/**
 * A value of the input the provider cannot take, and what it takes of that field instead:
 * `takes`, the values of the field the model accepts that map (an unmapped value), or the model's
 * default (a field the provider does not take); empty: the field must be left out.
 */
export interface InputRefusal {
  field: string;
  value: unknown;
  takes: unknown[];
}
