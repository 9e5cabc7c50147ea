/**
 * Every command of the `mediaforge` CLI: its words, what it does, its flags, and how to load it. The
 * table imports nothing: `mediaforge --help` reads it alone, and a command's module (and through it
 * the database drivers, Fastify, the generated catalogue) is imported only when that command runs.
 */

export interface Flag {
  /** Placeholder of the value (`N`, `URL`); absent for a switch. */
  value?: string;
  description: string;
  short?: string;
}

/** What a command's run function gets: its flags' values (strings, or true for switches) and its positional arguments. */
export interface CommandInput {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export type CommandRun = (input: CommandInput) => Promise<number>;

export interface Command {
  /** The words that name it: `['accounts', 'create']`. */
  words: string[];
  summary: string;
  /** Positional arguments after the words, e.g. `DELIVERY_ID`. */
  args?: { name: string; description: string }[];
  flags: Record<string, Flag>;
  /** Flags that must be given (shown without brackets in the usage line). */
  required?: string[];
  load: () => Promise<CommandRun>;
}

const DB: Flag = {
  value: 'URL',
  description: 'database: sqlite:PATH or postgres://... (default: MEDIAFORGE_DB, else sqlite:./data/mediaforge.db)',
};
const JSON_OUT: Flag = { description: 'print one JSON object' };
const ACCOUNT: Flag = { value: 'ID', description: 'the account id (acct_...)' };
const WORKSPACE: Flag = { value: 'W', description: 'personal (default) or team:NAME' };
/** A key's policy (issue 40, runtime/accounts/key-policy.ts). */
const KEY_POLICY_FLAGS: Record<string, Flag> = {
  budget: {
    value: 'N/PERIOD',
    description: 'most credits per day, week (from Monday), month (UTC) or lifetime: 5000/month',
  },
  'budget-alerts': {
    value: 'PERCENTS',
    description: 'key.budget_threshold alerts at these percents of the budget, comma-separated (default 80,100)',
  },
  models: {
    value: 'LIST',
    description: "model ids and family patterns of whole segments, comma-separated: '<vendor>/*'",
  },
  'max-in-flight': { value: 'N', description: 'most tasks queued or running at once' },
  expires: { value: 'DATE', description: 'the key is refused from then on (ISO 8601 date or date-time, UTC)' },
  networks: { value: 'CIDRS', description: 'client networks the key may be used from, comma-separated' },
};
const ENDPOINT: Flag = { value: 'ID', description: 'the endpoint id' };
const DEPLOYMENTS: Flag = {
  value: 'FILE',
  description: "the operator's deployments file (default: MEDIAFORGE_DEPLOYMENTS; none: every model on the simulator)",
};

const admin = (name: keyof typeof import('./commands/admin.js')) => async () =>
  (await import('./commands/admin.js'))[name] as CommandRun;
const deployments = (name: keyof typeof import('./commands/deployments.js')) => async () =>
  (await import('./commands/deployments.js'))[name] as CommandRun;
const operator = (name: keyof typeof import('./commands/operator.js')) => async () =>
  (await import('./commands/operator.js'))[name] as CommandRun;
const webhooks = (sub: string) => async () =>
  ((input: CommandInput) => import('./commands/webhooks.js').then((m) => m.webhooksCommand(sub, input))) as CommandRun;
const entities = (sub: string) => async () =>
  ((input: CommandInput) => import('./commands/entities.js').then((m) => m.entities(sub, input))) as CommandRun;

export const COMMANDS: Command[] = [
  {
    words: ['serve'],
    summary: 'run the service: the HTTP API and the worker (by --role)',
    flags: {
      port: { value: 'P', description: 'port to listen on (default: PORT, else 8080)' },
      host: { value: 'H', description: 'address to listen on (default: HOST, else 127.0.0.1)' },
      db: DB,
      role: { value: 'R', description: 'api, worker or all (default: MEDIAFORGE_ROLE, else all)' },
      migrate: { description: 'apply pending migrations first (npm start does)' },
      deployments: DEPLOYMENTS,
    },
    load: async () => (await import('./commands/serve.js')).serve,
  },
  {
    words: ['blobs', 'copy'],
    summary:
      'copy every media object of the current store (MEDIAFORGE_BLOB_STORE) to another; resumable, sizes verified',
    required: ['to'],
    flags: {
      to: {
        value: 'STORE',
        description:
          'the target store: local, database or s3://BUCKET[/PREFIX] (S3 settings from MEDIAFORGE_S3_*, AWS_*)',
      },
      db: DB,
      json: JSON_OUT,
    },
    load: async () => (await import('./commands/blobs.js')).blobsCopy,
  },
  {
    words: ['migrate'],
    summary: 'apply pending database migrations',
    flags: { db: DB, json: JSON_OUT },
    load: admin('migrate'),
  },
  {
    words: ['deployments', 'check'],
    summary: 'check a deployments file as serve would (problems as file:line:col), starting nothing',
    flags: {
      deployments: DEPLOYMENTS,
      probe: {
        description:
          'also probe each upstream (reachable, key accepted, path right) with a request that creates nothing',
      },
      json: JSON_OUT,
    },
    load: deployments('deploymentsCheck'),
  },
  {
    words: ['deployments', 'status'],
    summary:
      "the database it read, then each deployment's state ('no record' where it holds nothing of one), tasks in flight, submits and failures",
    flags: { deployments: DEPLOYMENTS, db: DB, json: JSON_OUT },
    load: deployments('deploymentsStatusCommand'),
  },
  {
    words: ['report', 'margin'],
    summary: 'revenue against upstream cost, per model and deployment',
    flags: {
      since: { value: 'DATE', description: 'only tasks created since (2025-01-31 or an ISO time)' },
      db: DB,
      json: JSON_OUT,
    },
    load: deployments('reportMargin'),
  },
  {
    words: ['accounts', 'create'],
    summary: 'create an account with its first API key and webhook secret (shown once)',
    flags: {
      credits: { value: 'N', description: 'credits purchased (a whole number, default 0)' },
      language: { value: 'L', description: 'language of its error messages and callbacks (one of the 12 supported)' },
      db: DB,
      json: JSON_OUT,
    },
    load: admin('accountsCreate'),
  },
  {
    words: ['accounts', 'set'],
    summary: "change an account's language, webhook payload version, low-balance alert or price book",
    required: ['account'],
    flags: {
      account: ACCOUNT,
      language: { value: 'L', description: 'language (one of the 12 supported)' },
      'payload-version': { value: 'V', description: 'task callback payload version, 1 or 2' },
      'low-balance': {
        value: 'N',
        description: 'send account.balance_low once available credits go below N (off: never)',
      },
      'price-book': {
        value: 'NAME',
        description: 'a book of spec/price-books/, or default (the published prices); running tasks keep theirs',
      },
      db: DB,
      json: JSON_OUT,
    },
    load: admin('accountsSet'),
  },
  {
    words: ['accounts', 'list'],
    summary: 'list accounts, newest first, with balance and users (--email: of the users whose email contains it)',
    flags: {
      email: { value: 'E', description: 'part of an email, or the start of an account id' },
      db: DB,
      json: JSON_OUT,
    },
    load: operator('accountsList'),
  },
  {
    words: ['accounts', 'show'],
    summary: 'one account: balance, usage of the last 30 days, keys, users and recent tasks',
    args: [{ name: 'ACCOUNT_ID', description: 'the account id (acct_...)' }],
    flags: { db: DB, json: JSON_OUT },
    load: operator('accountsShow'),
  },
  {
    words: ['users', 'list'],
    summary: 'list console users, newest first, with their role and account',
    flags: {
      email: { value: 'E', description: 'only users whose email contains this' },
      db: DB,
      json: JSON_OUT,
    },
    load: operator('usersList'),
  },
  {
    words: ['users', 'promote'],
    summary: 'give a console user the operator role (the operator sections of /console); recorded in the audit log',
    required: ['email'],
    flags: { email: { value: 'E', description: 'the email the user signed up with' }, db: DB, json: JSON_OUT },
    load: operator('usersPromote'),
  },
  {
    words: ['users', 'demote'],
    summary: 'take the operator role back; recorded in the audit log',
    required: ['email'],
    flags: { email: { value: 'E', description: 'the email the user signed up with' }, db: DB, json: JSON_OUT },
    load: operator('usersDemote'),
  },
  {
    words: ['audit'],
    summary: 'the audit log: every operator action (who, what, when, from which address), newest first',
    flags: {
      limit: { value: 'N', description: 'how many entries (default 100)' },
      db: DB,
      json: JSON_OUT,
    },
    load: operator('audit'),
  },
  {
    words: ['keys', 'create'],
    summary: 'create another API key for an account (shown once), with a policy if given',
    required: ['account'],
    flags: { account: ACCOUNT, workspace: WORKSPACE, ...KEY_POLICY_FLAGS, db: DB, json: JSON_OUT },
    load: admin('keysCreate'),
  },
  {
    words: ['keys', 'set'],
    summary: "change a key's policy (the flags given; `none` clears one); recorded in the audit log",
    required: ['key'],
    flags: {
      key: { value: 'KEY_ID', description: 'the key id (key_...)' },
      ...KEY_POLICY_FLAGS,
      db: DB,
      json: JSON_OUT,
    },
    load: admin('keysSet'),
  },
  {
    words: ['keys', 'scope'],
    summary: "turn a key's account-reports scope on or off (statements, account-wide usage); recorded in the audit log",
    required: ['key', 'account-reports'],
    flags: {
      key: { value: 'KEY_ID', description: 'the key id (key_...)' },
      'account-reports': { value: 'on|off', description: 'whether the key may read statements and account-wide usage' },
      db: DB,
      json: JSON_OUT,
    },
    load: admin('keysScope'),
  },
  {
    words: ['payments', 'reconcile'],
    summary:
      'credit the paid Checkout Sessions of the last 48 hours whose webhook never came, once (the worker does it every 15 minutes); recorded in the audit log',
    flags: { db: DB, json: JSON_OUT },
    load: async () => (await import('./commands/payments.js')).paymentsReconcile,
  },
  {
    words: ['usage', 'export'],
    summary:
      "every account's charged tasks that finished from --from to --to (whole UTC days) as CSV, or as FinOps FOCUS 1.0 columns, streamed to stdout; recorded in the audit log",
    required: ['from', 'to'],
    flags: {
      from: { value: 'YYYY-MM-DD', description: 'the first day (UTC)' },
      to: { value: 'YYYY-MM-DD', description: 'the last day (UTC), included' },
      format: { value: 'csv|focus', description: 'csv (default): one row per task; focus: the FOCUS 1.0 columns' },
      currency: { value: 'CODE', description: 'focus: the ISO 4217 currency of the costs (BillingCurrency)' },
      'credit-value': { value: 'AMOUNT', description: 'focus: what one credit is worth in that currency, e.g. 0.01' },
      'provider-name': {
        value: 'NAME',
        description: 'focus: ProviderName, PublisherName and InvoiceIssuerName (default mediaforge)',
      },
      db: DB,
    },
    load: async () => (await import('./commands/usage-export.js')).usageExport,
  },
  {
    words: ['keys', 'revoke'],
    summary: 'revoke a key: every server on the database refuses it from its next request',
    required: ['key'],
    flags: { key: { value: 'KEY_ID', description: 'the key id (key_...)' }, db: DB, json: JSON_OUT },
    load: admin('keysRevoke'),
  },
  {
    words: ['accounts', 'forgive-debt'],
    summary:
      'forgive everything an account owes (a refund or dispute took back more than was available): new tasks are accepted again; recorded in the audit log',
    required: ['account'],
    flags: {
      account: ACCOUNT,
      note: { value: 'TEXT', description: 'why (kept on the ledger row and in the audit log)' },
      'idempotency-key': {
        value: 'K',
        description: 'run again with the same K, nothing more is forgiven',
      },
      db: DB,
      json: JSON_OUT,
    },
    load: admin('accountsForgiveDebt'),
  },
  {
    words: ['credits', 'add'],
    summary: 'record a purchase of credits (recorded in the audit log)',
    required: ['account', 'credits'],
    flags: {
      account: ACCOUNT,
      credits: { value: 'N', description: 'credits purchased (a whole number >= 1)' },
      note: { value: 'TEXT', description: 'why (kept on the ledger row and in the audit log)' },
      'idempotency-key': {
        value: 'K',
        description: 'one per intended purchase: run again with the same K, nothing is added twice',
      },
      db: DB,
      json: JSON_OUT,
    },
    load: admin('creditsAdd'),
  },
  {
    words: ['webhooks', 'add'],
    summary: 'add an account webhook endpoint (Standard Webhooks); prints its signing secret once',
    required: ['account', 'url', 'events'],
    flags: {
      account: ACCOUNT,
      url: { value: 'URL', description: 'the https URL that receives the events' },
      events: {
        value: 'E1,E2',
        description:
          'task.succeeded, task.failed, task.expired, task.canceled, task.completed; alerts (opt-in): account.balance_low, key.budget_threshold',
      },
      db: DB,
      json: JSON_OUT,
    },
    load: webhooks('add'),
  },
  {
    words: ['webhooks', 'list'],
    summary: "list an account's endpoints",
    required: ['account'],
    flags: { account: ACCOUNT, db: DB, json: JSON_OUT },
    load: webhooks('list'),
  },
  {
    words: ['webhooks', 'disable'],
    summary: 'stop sending to an endpoint',
    required: ['account', 'endpoint'],
    flags: { account: ACCOUNT, endpoint: ENDPOINT, db: DB, json: JSON_OUT },
    load: webhooks('disable'),
  },
  {
    words: ['webhooks', 'enable'],
    summary: 'send to a disabled endpoint again',
    required: ['account', 'endpoint'],
    flags: { account: ACCOUNT, endpoint: ENDPOINT, db: DB, json: JSON_OUT },
    load: webhooks('enable'),
  },
  {
    words: ['webhooks', 'delete'],
    summary: 'delete an endpoint',
    required: ['account', 'endpoint'],
    flags: { account: ACCOUNT, endpoint: ENDPOINT, db: DB, json: JSON_OUT },
    load: webhooks('delete'),
  },
  {
    words: ['webhooks', 'rotate-secret'],
    summary: "rotate the account's callback secret, or one endpoint's (--endpoint)",
    required: ['account'],
    flags: { account: ACCOUNT, endpoint: ENDPOINT, db: DB, json: JSON_OUT },
    load: webhooks('rotate-secret'),
  },
  {
    words: ['webhooks', 'deliveries'],
    summary: "list an account's recent deliveries",
    required: ['account'],
    flags: { account: ACCOUNT, limit: { value: 'N', description: 'how many (default 50)' }, db: DB, json: JSON_OUT },
    load: webhooks('deliveries'),
  },
  {
    words: ['webhooks', 'resend'],
    summary: 'schedule a delivery again',
    args: [{ name: 'DELIVERY_ID', description: 'the delivery id' }],
    flags: { db: DB, json: JSON_OUT },
    load: webhooks('resend'),
  },
  {
    words: ['entities', 'create'],
    summary: 'create a character from 2 to 4 image assets of one library',
    required: ['account', 'name', 'assets'],
    flags: {
      account: ACCOUNT,
      workspace: WORKSPACE,
      name: { value: 'NAME', description: 'the character name' },
      assets: { value: 'A1,A2', description: '2 to 4 image asset ids' },
      db: DB,
      json: JSON_OUT,
    },
    load: entities('create'),
  },
  {
    words: ['entities', 'list'],
    summary: "list a library's characters",
    required: ['account'],
    flags: { account: ACCOUNT, workspace: WORKSPACE, db: DB, json: JSON_OUT },
    load: entities('list'),
  },
  {
    words: ['entities', 'delete'],
    summary: 'delete a character',
    required: ['account', 'entity'],
    flags: {
      account: ACCOUNT,
      workspace: WORKSPACE,
      entity: { value: 'ID', description: 'the character id' },
      db: DB,
      json: JSON_OUT,
    },
    load: entities('delete'),
  },
];

/** The command named by the first words of argv, and how many words it took. */
export function findCommand(words: string[]): Command | undefined {
  return COMMANDS.find((command) => command.words.every((word, i) => words[i] === word));
}

/** `mediaforge accounts create --credits N [--language L] [--db URL] [--json]` */
export function usageLine(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, flag]) => {
    const text = `--${name}${flag.value ? ` ${flag.value}` : ''}`;
    return command.required?.includes(name) ? text : `[${text}]`;
  });
  return ['mediaforge', ...command.words, ...(command.args ?? []).map((a) => a.name), ...flags].join(' ');
}

/** A command's whole help: its usage line, what it does, each argument and flag. */
export function commandHelp(command: Command): string {
  const rows = [
    ...(command.args ?? []).map((a) => [a.name, a.description]),
    ...Object.entries(command.flags).map(([name, flag]) => [
      `--${name}${flag.value ? ` ${flag.value}` : ''}`,
      flag.description,
    ]),
    ['-h, --help', 'show this help'],
  ];
  const width = Math.max(...rows.map(([left]) => left.length));
  return `usage: ${usageLine(command)}\n\n${command.summary[0].toUpperCase()}${command.summary.slice(1)}.\n\n${rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n')}`;
}

/** `mediaforge --help`: every command with its summary. */
export function generalHelp(): string {
  const names = COMMANDS.map((c) => c.words.join(' '));
  const width = Math.max(...names.map((n) => n.length));
  return `usage: mediaforge <command> [options]

The mediaforge service and its console commands, on one database.

Commands:
${COMMANDS.map((c, i) => `  ${names[i].padEnd(width)}  ${c.summary}`).join('\n')}

  mediaforge help COMMAND, mediaforge COMMAND --help   a command's options
  mediaforge --version                                the version

The database is --db or MEDIAFORGE_DB (sqlite:PATH or postgres://...); default sqlite:./data/mediaforge.db.
Commands migrate a SQLite database themselves; a PostgreSQL database is migrated by mediaforge migrate.
The deployments file is --deployments or MEDIAFORGE_DEPLOYMENTS (docs/deployments.md); without one every model runs on the simulator.`;
}
