import type { Generated } from 'kysely';

/** Tables of the service. Times are Unix milliseconds; booleans are 0/1 integers on both databases. */
/** The kinds of ledger rows: docs/architecture.md "The ledger's kinds and invariants". */
export type LedgerKind =
  | 'purchase'
  | 'grant'
  | 'hold'
  | 'settle'
  | 'release'
  | 'refund'
  | 'dispute'
  | 'dispute_won'
  | 'debt'
  | 'debt_paid'
  | 'debt_forgiven';

export interface Database {
  settings: { key: string; value: string };
  accounts: {
    id: string;
    created_at: number;
    language: string | null;
    webhook_secret: string;
    payload_version: number;
    /** Below this many available credits `account.balance_low` is sent (migration 0030); null: never. */
    low_balance_credits: number | null;
    /** The account's price book (migration 0029, spec/price-books/); null: the published catalogue. */
    price_book: string | null;
  };
  /** One row per alert sent (migration 0030): its uniqueness is "once per crossing". */
  alert_crossings: { account_id: string; kind: string; subject: string; generation: number; created_at: number };
  api_keys: {
    id: string;
    account_id: string;
    key_hash: string;
    key_prefix: string;
    workspace: string;
    created_at: number;
    revoked_at: number | null;
    /** The key's policy (migration 0023, runtime/accounts/key-policy.ts); null: none of that kind. */
    budget_credits: number | null;
    budget_period: string | null;
    /** JSON array of the budget's alert thresholds in percent (migration 0030); null: 80 and 100. */
    budget_alerts: string | null;
    /** JSON array of model ids and family patterns. */
    allowed_models: string | null;
    max_in_flight: number | null;
    expires_at: number | null;
    /** JSON array of CIDR blocks. */
    networks: string | null;
    /** 1: the key may read its account's statements and account-wide usage (migration 0026); default 0. */
    account_reports: Generated<number>;
  };
  /** A key budget's counter per period (migration 0023): credits held and spent by tasks accepted in it. */
  key_spend: { api_key_id: string; period_start: number; held: number; spent: number };
  /** One row per account: the current balance. Every change is also a ledger row. */
  wallets: {
    account_id: string;
    available: number;
    held: number;
    spent: number;
    purchased: number;
    /** What a refund or dispute could not take back: a debt, refused on new work while > 0 (migration 0022). */
    owed: Generated<number>;
    /** What refunds, disputes and debt payments took back: purchased - reversed = available + held + spent. */
    reversed: Generated<number>;
  };
  ledger_entries: {
    id: Generated<number>;
    account_id: string;
    task_id: string | null;
    kind: LedgerKind;
    /** Credits moved: purchase adds to available; hold moves available to held; settle moves held to spent (charge) and back to available (rest); release moves held back to available. */
    amount: number;
    created_at: number;
    /** Why credits were added (an operator's note in the console); null otherwise. */
    note: string | null;
    /** The operator (users.id) who added them in the console; null otherwise. */
    by_user_id: string | null;
    /** A purchase's idempotency key, unique per account (migration 0018); null otherwise. */
    reference: string | null;
  };
  /** Checkout Sessions the service created, with the pack sold as it was then (migration 0022). */
  payment_sessions: {
    id: string;
    account_id: string;
    pack: string;
    credits: number;
    bonus: number;
    price: number;
    currency: string;
    created_at: number;
    credited_at: number | null;
    payment_intent: string | null;
  };
  /** Payment events received but not applied (an unknown account or session), for the operator. */
  payment_events: { id: string; type: string; object_id: string; problem: string; received_at: number };
  holds: {
    task_id: string;
    account_id: string;
    amount: number;
    state: 'held' | 'settled' | 'released';
    charged: number | null;
    created_at: number;
    resolved_at: number | null;
    /** The key_spend row this hold counts against (migration 0023); null: the key had no budget. */
    spend_key_id: string | null;
    spend_period: number | null;
  };
  tasks: {
    id: string;
    account_id: string;
    api_key_id: string;
    model: string;
    state: string;
    input_json: string | null;
    callback_url: string | null;
    request_id: string;
    progress: number;
    estimated_credits: number;
    max_credits: number;
    charged_credits: number | null;
    /** The billable seconds the settlement priced (migration 0028); null before it, or when nothing was charged. */
    billed_seconds: number | null;
    settled: number;
    error_code: string | null;
    error_message: string | null;
    output_json: string | null;
    warnings_json: string;
    /** The deployment the task was submitted to (null until then); with the handle, where every later call goes. */
    deployment: string | null;
    /** The upstream's id of the job (an adapter may keep JSON here: the URLs it needs to find the job again). */
    deployment_handle: string | null;
    /** What the operator pays the upstream for this task, in millionths of a USD (null: not declared, or not ended). */
    upstream_cost_micros: number | null;
    /** The billed reference clips' lengths (JSON array of seconds, in the field's order), measured before the submit (null: not measured, or none billed). */
    reference_clip_seconds_json: string | null;
    /** When an upstream's callback first woke the task's poll (null: none yet); later callbacks are replays. */
    upstream_callback_at: number | null;
    /** How an upstream job its task no longer waited for ended, learned by reconciliation (runtime/worker/reconcile.ts); null: not reconciled. */
    upstream_final_state: string | null;
    /** When the task's first submit was attempted (null: never); the submit window counts from it (runtime/worker/submit-window.ts). */
    first_submit_at: number | null;
    /** When a submit whose outcome is unknown was given up on a protocol without an idempotency key: a job may run (runtime/worker/unknown-submit.ts); null: none. */
    unknown_submit_at: number | null;
    /** The declared cost of that possible job as requested, in millionths of a USD (null: none declared). */
    unknown_submit_cost_micros: number | null;
    retry_of: string | null;
    retention_seconds: number | null;
    /** The price book the task was accepted under (migration 0029): settlement charges at it. */
    price_book: string | null;
    created_at: number;
    updated_at: number;
    started_at: number | null;
    finished_at: number | null;
    deadline_at: number;
    purged_at: number | null;
  };
  idempotency_keys: {
    account_id: string;
    scope: string;
    key: string;
    api_key_id: string;
    fingerprint: string;
    task_id: string;
    created_at: number;
    expires_at: number;
  };
  /** Media objects, when the blob store is the database (MEDIAFORGE_BLOB_STORE=database). */
  blobs: {
    key: string;
    /** The whole object for rows written before 0006; empty when the bytes are in `blob_chunks`. */
    bytes: Uint8Array;
    size: number;
    created_at: number;
    /** The `blob_chunks` set holding the bytes (null: the bytes are in `bytes`). */
    chunk_set: string | null;
  };
  /** The bytes of database media objects, in order, about 1 MiB a row. */
  blob_chunks: {
    chunk_set: string;
    seq: number;
    bytes: Uint8Array;
  };
  /** Upload tickets: pending until the signed PUT arrives, then uploaded, then committed (one use each); expired a day after an unused ticket ran out. */
  uploads: {
    id: string;
    account_id: string;
    library: string;
    api_key_id: string;
    file_name: string;
    content_type: string;
    kind: string;
    declared_size: number;
    max_bytes: number;
    state: 'pending' | 'receiving' | 'uploaded' | 'committed' | 'failed' | 'expired';
    received_bytes: number | null;
    blob_key: string | null;
    asset_id: string | null;
    created_at: number;
    expires_at: number;
    uploaded_at: number | null;
  };
  /** The private asset library; `library` is 'personal' or 'team:NAME'. Metadata comes from probing the bytes. */
  assets: {
    id: string;
    account_id: string;
    library: string;
    name: string;
    kind: 'image' | 'video' | 'audio' | 'lora' | 'document';
    mime: string;
    /** Short format name of the probed bytes: png, jpeg, webp, bmp, gif, mp4, mov, wav, mp3, pdf, safetensors ... */
    format: string;
    bytes: number;
    width: number | null;
    height: number | null;
    has_alpha: number | null;
    duration_seconds: number | null;
    fps: number | null;
    blob_key: string;
    /** 'upload', 'import' or 'task' (saved from a task's output). */
    source: string;
    source_task_id: string | null;
    created_at: number;
    deleted_at: number | null;
  };
  /** Characters: one named subject built from 2 to 4 image assets (`asset_ids` is a JSON array). */
  entities: {
    id: string;
    account_id: string;
    library: string;
    name: string;
    asset_ids: string;
    created_at: number;
    deleted_at: number | null;
  };
  /** The service's copy of an external reference of a task (migration 0031): measured by the check, sent to the provider as a signed link. */
  reference_copies: { task_id: string; path: string; blob_key: string; bytes: number; created_at: number };
  /** Per deployment, shared by all processes: consecutive failed submits and the cool-down they caused. */
  upstream_health: {
    name: string;
    consecutive_failures: number;
    cooldown_until: number | null;
    last_failure: string | null;
    last_failure_at: number | null;
    /** The failure class of the last failed call (runtime/deployments/upstream-error.ts); null: none on record. */
    last_failure_class: string | null;
    updated_at: number;
    /** When it last cooled for everyone (runtime/routing/evidence.ts); null: not tripped (or recovered since). */
    tripped_at: number | null;
    /** Cool-downs for everyone in a row without a recovery: two or more is `down`. */
    trips: Generated<number>;
    /** Half-open: a trial call is in progress until then (one at a time); null: none. */
    trial_until: number | null;
    /** Its last probe (a request that creates nothing) and what it found (runtime/deployments/deployment.ts ProbeOutcome). */
    probed_at: number | null;
    probe_outcome: string | null;
    /** What the probe was answered (`GET /api/v1/jobs: status 401`), with the operator's key redacted. */
    probe_detail: string | null;
  };
  /** One row per deployment and task that failed a call to it: the evidence a cool-down is judged on (runtime/routing/evidence.ts). */
  upstream_evidence: {
    deployment: string;
    task_id: string;
    /** The console user behind the task's account, or the account itself where no user has it. */
    owner_id: string;
    /** 1: a paying, non-playground account: its evidence counts toward a cool-down for everyone. */
    counts_globally: number;
    failure_class: string;
    failed_at: number;
  };
  /** One owner's own cool-down on one deployment: its tasks fail over or fail fast there, nobody else's. */
  upstream_owner_cooldowns: { deployment: string; owner_id: string; until: number };
  /** Per deployment: running totals (submits, failures by class, poll latency buckets) added to by every process. */
  upstream_counters: { name: string; counter: string; value: number };
  /** Work that outlives a request, claimed by workers with a lease. */
  work_items: {
    id: Generated<number>;
    kind: string;
    task_id: string | null;
    ref_id: string | null;
    due_at: number;
    lease_owner: string | null;
    lease_until: number | null;
    attempts: number;
    done_at: number | null;
    created_at: number;
  };
  /** Account endpoints (Standard Webhooks). `events` is a comma list; `previous_secret` stays valid until `previous_until` after a rotation. */
  webhook_endpoints: {
    id: string;
    account_id: string;
    url: string;
    events: string;
    secret: string;
    previous_secret: string | null;
    previous_until: number | null;
    created_at: number;
    disabled_at: number | null;
  };
  /**
   * One row per announcement: a task callback or an account-endpoint event. `body` is the exact
   * JSON text built when the task resolved; it is signed again at every attempt. `attempts` counts
   * every attempt ever made, `round_attempts` those since the last resend (the retry schedule).
   */
  webhook_deliveries: {
    id: string;
    account_id: string;
    task_id: string;
    kind: 'callback' | 'endpoint';
    endpoint_id: string | null;
    event_type: string;
    url: string;
    payload_version: number;
    body: string;
    state: 'pending' | 'delivered' | 'failed';
    attempts: number;
    round_attempts: number;
    next_attempt_at: number | null;
    last_attempt_at: number | null;
    last_status: number | null;
    last_error: string | null;
    created_at: number;
    delivered_at: number | null;
  };
  /** Console users: email + bcrypt hash; `playground_account_id` holds the free playground credits (no usable API key). */
  users: {
    id: string;
    email: string;
    password_hash: string;
    account_id: string;
    playground_account_id: string;
    created_at: number;
    /** `user`, or `operator` (granted by `mediaforge users promote`, never by sign-up). */
    role: Generated<'user' | 'operator'>;
  };
  /** Console sessions, by SHA-256 of the cookie value; `csrf_token` must come back in X-CSRF-Token on state changes. */
  sessions: { id_hash: string; user_id: string; csrf_token: string; created_at: number; expires_at: number };
  /** Every operator action: who (a user id, or `cli`), what, on what, from which client address, its details (JSON). Never purged. */
  audit_log: {
    id: string;
    actor: string;
    action: string;
    target: string | null;
    client_address: string | null;
    details: string;
    created_at: number;
  };
}
