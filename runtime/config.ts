import { availableParallelism } from 'node:os';
import { MODEL_INFO } from '../generated/model-info.js';
import { parseBlobStoreSetting, s3SettingsFromEnv, type S3Settings } from './blobs/blob-store-setting.js';
import { parseFaultPoints } from './faults.js';
import type { OutboundPolicy, Resolver } from './net/address-policy.js';

/** Environment variables by name (the process's, or a test's own). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Everything the service reads from flags and the environment, with its default. */
export interface Config {
  host: string;
  port: number;
  dbUrl: string;
  /** Absolute root used in links handed to clients (output URLs, upload tickets). */
  publicUrl: string;
  dataDir: string;
  secret?: string;
  role: 'api' | 'worker' | 'all';
  simulatorLatencyMs: number;
  simulatorFailWhenPromptContains?: string;
  taskDeadlineMs: number;
  retentionSeconds: number;
  bodyLimitBytes: number;
  /** Requests a minute per API key id (authenticated routes), per client address (every other route), and failed authentications per address. */
  rateLimitPerMinute: number;
  /** Console sign-in attempts a minute per client address (an IPv4 address or an IPv6 /64). */
  signInPerAddressPerMinute: number;
  /** Failed sign-ins of one email from one client address before it is locked out there; the lockout doubles with each further failure. */
  signInFailuresBeforeLockout: number;
  /** The first lockout of an email (then 2x, 4x, ... up to signInLockoutMaxSeconds). */
  signInLockoutSeconds: number;
  signInLockoutMaxSeconds: number;
  /** Sign-up attempts (each a possible 30-credit playground grant) a day per client address. */
  signUpsPerAddressPerDay: number;
  /** Password hashes computed at once (libuv's thread pool); more wait in a queue of passwordHashQueue, beyond it 429. */
  passwordHashConcurrency: number;
  passwordHashQueue: number;
  pollHintSeconds: number;
  outputLinkTtlSeconds: number;
  workerIdleMs: number;
  /** Items in flight in the worker's task lane (runs, polls, expiries, purges, maintenance). */
  workerConcurrency: number;
  /** Items in flight in the reference-check lane (external reference files fetched before a run). */
  workerCheckConcurrency: number;
  /** Items in flight in the webhook-delivery lane. */
  workerDeliveryConcurrency: number;
  /** Items in flight in the reconciliation lane (slow polls of upstream jobs their ended tasks no longer wait for). */
  workerReconcileConcurrency: number;
  /** Most items of one account leased at once in each lane (0: no cap), so one account's backlog cannot hold another's work. */
  workerAccountCap: number;
  /** How long a claimed work item is its worker's; the worker renews it while the item runs (runtime/queue/heartbeat.ts). */
  leaseMs: number;
  /** After SIGTERM, how long items in flight (a result still downloading) may run before they are aborted and left for the next start. */
  shutdownGraceMs: number;
  /** Where media objects live: a local directory, the database, or an S3-compatible bucket (both shared by several machines). */
  blobStore: 'local' | 'database' | 's3';
  /** The bucket and how to reach it, when blobStore is s3. */
  s3?: S3Settings;
  /** What a signed media link answers on a store that serves its objects itself: 302 to the store, or the bytes through the service. */
  mediaLinks: 'redirect' | 'proxy';
  /** Redis URL for rate limits shared by all API processes; without it limits are per process. */
  redisUrl?: string;
  /** Test runs only: a directory where the store's operations are recorded (runtime/blobs/recorded-store.ts). */
  statementRecordDir?: string;
  webhookAllowPrivate: boolean;
  webhookAllowInsecure: boolean;
  /** Total time one webhook attempt may take (connect, send, answer); 15 s by the specification. */
  webhookTimeoutMs: number;
  /**
   * DNS for every outbound check and connection (callbacks, endpoints, imports, reference
   * fetches). Never read from the environment: absent means the system resolver; tests inject a
   * stub so that no query leaves the machine.
   */
  outboundResolver?: Resolver;
  /** The model of a compatible-layer POST /v1/videos that names none. */
  compatDefaultModel: string;
  /** Largest file an upload ticket accepts (100 MB). */
  uploadMaxBytes: number;
  /** How long an upload ticket stays valid (15 minutes). */
  uploadTicketTtlSeconds: number;
  /** The kinds of file uploads may carry: image, video, audio, document, lora. */
  uploadKinds: string[];
  /** Largest LoRA file POST /files/import fetches (500 MB). */
  importMaxBytes: number;
  /** Total time one import may take (connect, redirect refusal, body). */
  importTimeoutMs: number;
  /** Lifetime of an asset's private preview link (5 minutes). */
  previewLinkTtlSeconds: number;
  /**
   * When set, /metrics and the detail of /readyz need `Authorization: Bearer <token>`; unset, they
   * answer loopback callers only. /healthz and /readyz's bare status stay open.
   */
  metricsToken?: string;
  /**
   * Addresses or CIDR ranges of the reverse proxies in front of the service, whose X-Forwarded-For
   * names the client (Fastify's trustProxy): rate limits, sign-in lockouts and the loopback check of
   * /metrics then see the client, not the proxy. Empty: the connection's own address is the client.
   */
  trustedProxies: string[];
  /** The operator's deployments file (docs/deployments.md); unset: every model runs on the embedded simulator. */
  deploymentsFile?: string;
  /** Largest result an upstream may hand back (2 GB); larger is refused while it streams. */
  upstreamResultMaxBytes: number;
  /** Longest download of one upstream result (10 minutes). */
  upstreamResultTimeoutMs: number;
  /** How often an upstream job is polled when the upstream gives neither progress nor a hint (2 s). */
  upstreamPollMs: number;
  /**
   * How long after its task ended an upstream job that may still run (the task expired, was
   * canceled, or its poll gave up) is still polled to learn how it ended and what it cost (24 h;
   * hours, decimals allowed). Then it is left as `unresolved`.
   */
  upstreamReconcileMs: number;
  /** The pace of those polls (5 minutes): slow, they only learn the job's end. */
  upstreamReconcilePollMs: number;
  /**
   * How long a task whose submits keep failing (every deployment refused it, was unreachable or
   * cooling down) keeps trying, counted from its first submit attempt (120 s; seconds, decimals
   * allowed): then it fails, hold released. The task deadline stays for tasks that started.
   */
  upstreamSubmitWindowMs: number;
  /**
   * Crash fault points armed (tests only; runtime/faults.ts): point name -> the time it is reached
   * that kills the process. Absent or empty: every point is a no-op.
   */
  faultPoints?: Readonly<Record<string, number>>;
  /** Payments (docs/payments.md): the Stripe secret key; without it and a webhook secret, payments are off. */
  stripeSecretKey?: string;
  /** Webhook signing secrets accepted (MEDIAFORGE_STRIPE_WEBHOOK_SECRET, comma-separated: a rotation keeps the old one a while). */
  stripeWebhookSecrets: string[];
  /** Another Stripe API origin (a test server; http only on loopback); unset: Stripe's own. */
  stripeApiUrl?: string;
  /** How often the worker lists recent Checkout Sessions to credit the paid ones whose event never came (10 minutes). */
  paymentsReconcileMs: number;
  /**
   * The environment this configuration was read from. Only the deployments file reads it: its
   * `secretEnv` names the variable an upstream's key is in.
   */
  environment: Environment;
}

const int = (value: string | undefined, fallback: number) =>
  value === undefined || value === '' ? fallback : Number.parseInt(value, 10);
/** A non-negative decimal; anything else (empty, text, negative) is the default, so that no time limit becomes NaN. */
const decimal = (value: string | undefined, fallback: number) => {
  const parsed = Number.parseFloat(value ?? '');
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
};

/** A decimal above zero; anything else (empty, text, zero, negative) is the default, so that no window is empty or NaN. */
const positive = (value: string | undefined, fallback: number) => {
  const parsed = decimal(value, fallback);
  return parsed > 0 ? parsed : fallback;
};

/**
 * The process's environment, with `set` laid over it (the CLI's flags: --db is MEDIAFORGE_DB, ...;
 * an undefined value leaves the variable as it is). This file is the only one that reads
 * `process.env` (test/composition/no-module-state.test.ts checks): everything else is handed a Config.
 */
export function processEnvironment(set: Environment = {}): Environment {
  const defined = Object.entries(set).filter(([, value]) => value !== undefined);
  return { ...process.env, ...Object.fromEntries(defined) };
}

export function configFromEnv(env: Environment = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? int(env.PORT, 8080);
  const host = overrides.host ?? env.HOST ?? '127.0.0.1';
  return {
    host,
    port,
    dbUrl: env.MEDIAFORGE_DB ?? 'sqlite:./data/mediaforge.db',
    publicUrl: env.MEDIAFORGE_PUBLIC_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    dataDir: env.MEDIAFORGE_DATA_DIR ?? './data',
    secret: env.MEDIAFORGE_SECRET || undefined,
    role: (env.MEDIAFORGE_ROLE as Config['role']) ?? 'all',
    simulatorLatencyMs: int(env.MEDIAFORGE_SIMULATOR_LATENCY_MS, 3000),
    simulatorFailWhenPromptContains: env.MEDIAFORGE_SIMULATOR_FAIL_WHEN_PROMPT_CONTAINS || undefined,
    taskDeadlineMs: int(env.MEDIAFORGE_TASK_DEADLINE_SECONDS, 30 * 60) * 1000,
    retentionSeconds: int(env.MEDIAFORGE_RETENTION_SECONDS, 30 * 24 * 3600),
    bodyLimitBytes: int(env.MEDIAFORGE_BODY_LIMIT_BYTES, 1024 * 1024),
    rateLimitPerMinute: int(env.MEDIAFORGE_RATE_LIMIT_PER_MINUTE, 600),
    signInPerAddressPerMinute: int(env.MEDIAFORGE_SIGNIN_PER_ADDRESS_PER_MINUTE, 20),
    signInFailuresBeforeLockout: int(env.MEDIAFORGE_SIGNIN_FAILURES_BEFORE_LOCKOUT, 5),
    signInLockoutSeconds: int(env.MEDIAFORGE_SIGNIN_LOCKOUT_SECONDS, 60),
    signInLockoutMaxSeconds: int(env.MEDIAFORGE_SIGNIN_LOCKOUT_MAX_SECONDS, 3600),
    signUpsPerAddressPerDay: int(env.MEDIAFORGE_SIGNUPS_PER_ADDRESS_PER_DAY, 10),
    // One core is left to the event loop: scrypt threads compete with it for CPU, not for its time.
    passwordHashConcurrency: int(
      env.MEDIAFORGE_PASSWORD_HASH_CONCURRENCY,
      Math.max(1, Math.min(4, availableParallelism() - 1)),
    ),
    passwordHashQueue: int(env.MEDIAFORGE_PASSWORD_HASH_QUEUE, 64),
    pollHintSeconds: int(env.MEDIAFORGE_POLL_HINT_SECONDS, 3),
    outputLinkTtlSeconds: int(env.MEDIAFORGE_OUTPUT_LINK_TTL_SECONDS, 20 * 60),
    workerIdleMs: int(env.MEDIAFORGE_WORKER_IDLE_MS, 500),
    workerConcurrency: int(env.MEDIAFORGE_WORKER_CONCURRENCY, 32),
    workerCheckConcurrency: int(env.MEDIAFORGE_WORKER_CHECK_CONCURRENCY, 16),
    workerDeliveryConcurrency: int(env.MEDIAFORGE_WORKER_DELIVERY_CONCURRENCY, 32),
    workerReconcileConcurrency: int(env.MEDIAFORGE_WORKER_RECONCILE_CONCURRENCY, 8),
    workerAccountCap: int(env.MEDIAFORGE_WORKER_ACCOUNT_CAP, 8),
    leaseMs: int(env.MEDIAFORGE_LEASE_MS, 60_000),
    shutdownGraceMs: int(env.MEDIAFORGE_SHUTDOWN_GRACE_SECONDS, 30) * 1000,
    ...blobStoreOf(env),
    mediaLinks: env.MEDIAFORGE_MEDIA_LINKS === 'proxy' ? 'proxy' : 'redirect',
    redisUrl: env.MEDIAFORGE_REDIS || undefined,
    statementRecordDir: env.MEDIAFORGE_STATEMENT_RECORD || undefined,
    webhookAllowPrivate: env.MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE === '1',
    webhookAllowInsecure: env.MEDIAFORGE_WEBHOOK_ALLOW_INSECURE === '1',
    webhookTimeoutMs: int(env.MEDIAFORGE_WEBHOOK_TIMEOUT_MS, 15_000),
    compatDefaultModel: env.MEDIAFORGE_COMPAT_DEFAULT_MODEL || firstModelOfMode('reference-to-video'),
    uploadMaxBytes: int(env.MEDIAFORGE_UPLOAD_MAX_BYTES, 100 * 1000 * 1000),
    uploadTicketTtlSeconds: int(env.MEDIAFORGE_UPLOAD_TICKET_TTL_SECONDS, 15 * 60),
    uploadKinds: (env.MEDIAFORGE_UPLOAD_KINDS || 'image,video,audio,document,lora')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    importMaxBytes: int(env.MEDIAFORGE_IMPORT_MAX_BYTES, 500 * 1000 * 1000),
    importTimeoutMs: int(env.MEDIAFORGE_IMPORT_TIMEOUT_MS, 5 * 60_000),
    previewLinkTtlSeconds: int(env.MEDIAFORGE_PREVIEW_LINK_TTL_SECONDS, 5 * 60),
    metricsToken: env.MEDIAFORGE_METRICS_TOKEN || undefined,
    trustedProxies: (env.MEDIAFORGE_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
    deploymentsFile: env.MEDIAFORGE_DEPLOYMENTS || undefined,
    upstreamResultMaxBytes: int(env.MEDIAFORGE_UPSTREAM_RESULT_MAX_BYTES, 2 * 1000 * 1000 * 1000),
    upstreamResultTimeoutMs: int(env.MEDIAFORGE_UPSTREAM_RESULT_TIMEOUT_SECONDS, 600) * 1000,
    upstreamPollMs: int(env.MEDIAFORGE_UPSTREAM_POLL_MS, 2000),
    upstreamReconcileMs: Math.round(decimal(env.MEDIAFORGE_UPSTREAM_RECONCILE_HOURS, 24) * 3_600_000),
    upstreamReconcilePollMs: int(env.MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS, 5 * 60_000),
    upstreamSubmitWindowMs: Math.round(positive(env.MEDIAFORGE_UPSTREAM_SUBMIT_WINDOW_SECONDS, 120) * 1000),
    faultPoints: parseFaultPoints(env.MEDIAFORGE_FAULT_POINTS),
    stripeSecretKey: env.MEDIAFORGE_STRIPE_SECRET_KEY || undefined,
    stripeWebhookSecrets: (env.MEDIAFORGE_STRIPE_WEBHOOK_SECRET ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    stripeApiUrl: env.MEDIAFORGE_STRIPE_API_URL || undefined,
    paymentsReconcileMs: Math.round(positive(env.MEDIAFORGE_PAYMENTS_RECONCILE_SECONDS, 600) * 1000),
    environment: env,
    ...overrides,
  };
}

/** The store of MEDIAFORGE_BLOB_STORE; a value that names none is local here, and stops `serve` (runtime/cli/commands/serve.ts). */
function blobStoreOf(env: Environment): Pick<Config, 'blobStore' | 's3'> {
  const setting = parseBlobStoreSetting(env.MEDIAFORGE_BLOB_STORE);
  if ('problem' in setting) return { blobStore: 'local' };
  if (setting.store !== 's3') return { blobStore: setting.store };
  return { blobStore: 's3', s3: s3SettingsFromEnv(env, setting.bucket, setting.prefix) };
}

/** The first model of a mode in catalogue order (ids are never named in the runtime), else the first model. */
function firstModelOfMode(mode: string): string {
  return (MODEL_INFO.find((info) => info.mode === mode) ?? MODEL_INFO[0])?.id ?? '';
}

/** The destinations outbound requests may reach; both switches are for loopback test receivers only. */
export function outboundPolicy(config: Config): OutboundPolicy {
  return {
    allowPrivate: config.webhookAllowPrivate,
    allowInsecure: config.webhookAllowInsecure,
    ...(config.outboundResolver ? { resolver: config.outboundResolver } : {}),
  };
}
