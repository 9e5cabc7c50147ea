import { catalogue } from '../generated/catalogue.js';
import type { OutboundPolicy, Resolver } from './net/address-policy.js';

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
  rateLimitPerMinute: number;
  pollHintSeconds: number;
  outputLinkTtlSeconds: number;
  workerIdleMs: number;
  workerConcurrency: number;
  leaseMs: number;
  /** Where media objects live: a local directory, or the database (shared by several machines). */
  blobStore: 'local' | 'database';
  /** Redis URL for rate limits shared by all API processes; without it limits are per process. */
  redisUrl?: string;
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
}

const int = (value: string | undefined, fallback: number) => (value === undefined || value === '' ? fallback : Number.parseInt(value, 10));

export function configFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
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
    pollHintSeconds: int(env.MEDIAFORGE_POLL_HINT_SECONDS, 3),
    outputLinkTtlSeconds: int(env.MEDIAFORGE_OUTPUT_LINK_TTL_SECONDS, 20 * 60),
    workerIdleMs: int(env.MEDIAFORGE_WORKER_IDLE_MS, 500),
    workerConcurrency: int(env.MEDIAFORGE_WORKER_CONCURRENCY, 32),
    leaseMs: int(env.MEDIAFORGE_LEASE_MS, 60_000),
    blobStore: env.MEDIAFORGE_BLOB_STORE === 'database' ? 'database' : 'local',
    redisUrl: env.MEDIAFORGE_REDIS || undefined,
    webhookAllowPrivate: env.MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE === '1',
    webhookAllowInsecure: env.MEDIAFORGE_WEBHOOK_ALLOW_INSECURE === '1',
    webhookTimeoutMs: int(env.MEDIAFORGE_WEBHOOK_TIMEOUT_MS, 15_000),
    compatDefaultModel: env.MEDIAFORGE_COMPAT_DEFAULT_MODEL || firstModelOfMode('reference-to-video'),
    uploadMaxBytes: int(env.MEDIAFORGE_UPLOAD_MAX_BYTES, 100 * 1000 * 1000),
    uploadTicketTtlSeconds: int(env.MEDIAFORGE_UPLOAD_TICKET_TTL_SECONDS, 15 * 60),
    uploadKinds: (env.MEDIAFORGE_UPLOAD_KINDS || 'image,video,audio,document,lora').split(',').map((k) => k.trim()).filter(Boolean),
    importMaxBytes: int(env.MEDIAFORGE_IMPORT_MAX_BYTES, 500 * 1000 * 1000),
    importTimeoutMs: int(env.MEDIAFORGE_IMPORT_TIMEOUT_MS, 5 * 60_000),
    previewLinkTtlSeconds: int(env.MEDIAFORGE_PREVIEW_LINK_TTL_SECONDS, 5 * 60),
    ...overrides,
  };
}

/** The first model of a mode in catalogue order (ids are never named in the runtime), else the first model. */
function firstModelOfMode(mode: string): string {
  const models = [...catalogue.values()];
  return (models.find((m) => m.info.mode === mode) ?? models[0])?.info.id ?? '';
}

/** The destinations outbound requests may reach; both switches are for loopback test receivers only. */
export function outboundPolicy(config: Config): OutboundPolicy {
  return { allowPrivate: config.webhookAllowPrivate, allowInsecure: config.webhookAllowInsecure, ...(config.outboundResolver ? { resolver: config.outboundResolver } : {}) };
}
