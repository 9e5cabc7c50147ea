import { parseArgs } from 'node:util';
import { addCredits, createAccount, createKey, revokeKey } from '../accounts/accounts.js';
import { ENTITIES_USAGE, entitiesCommand } from '../assets/entities-cli.js';
import { configFromEnv, outboundPolicy } from '../config.js';
import { armedFaultPoints } from '../faults.js';
import { createService, openServiceDb } from '../service.js';
import { migrateToLatest } from '../storage/migrate.js';
import { addEndpoint, deleteEndpoint, disableEndpoint, enableEndpoint, listDeliveries, listEndpoints, resendDelivery, rotateAccountSecret, rotateEndpointSecret, setAccountWebhookSettings, WebhookAdminError } from '../webhooks/admin.js';

const USAGE = `mediaforge <command> [options]

  serve [--port P] [--host H] [--db URL] [--role api|worker|all] [--migrate]
  migrate [--db URL] [--json]
  accounts create --credits N [--language de] [--json]
  keys create --account ID [--workspace team:NAME] [--json]
  keys revoke --key KEY_ID [--json]
  credits add --account ID --credits N [--json]
  accounts set --account ID [--language L] [--payload-version 1|2] [--json]
  webhooks add --account ID --url URL --events task.succeeded,task.failed [--json]
  webhooks list --account ID [--json]
  webhooks disable --account ID --endpoint ID [--json]
  webhooks enable --account ID --endpoint ID [--json]
  webhooks delete --account ID --endpoint ID [--json]
  webhooks rotate-secret --account ID [--endpoint ID] [--json]
  webhooks deliveries --account ID [--limit N] [--json]
  webhooks resend DELIVERY_ID [--json]
${ENTITIES_USAGE}

The database is --db or MEDIAFORGE_DB (sqlite:PATH or postgres://...); default sqlite:./data/mediaforge.db.`;

class UsageError extends Error {}

function wholeNumber(value: string | undefined, name: string, min = 0): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${name} must be a whole number${min ? ` >= ${min}` : ''}`);
  return Number(value);
}

function print(json: boolean, value: Record<string, unknown>, text: string) {
  console.log(json ? JSON.stringify(value) : text);
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      db: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      role: { type: 'string' },
      migrate: { type: 'boolean' },
      json: { type: 'boolean' },
      credits: { type: 'string' },
      language: { type: 'string' },
      account: { type: 'string' },
      workspace: { type: 'string' },
      key: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      endpoint: { type: 'string' },
      'payload-version': { type: 'string' },
      limit: { type: 'string' },
      name: { type: 'string' },
      assets: { type: 'string' },
      entity: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const env = { ...process.env, ...(values.db ? { MEDIAFORGE_DB: values.db } : {}), ...(values.role ? { MEDIAFORGE_ROLE: values.role } : {}) };
  const config = configFromEnv(env, {
    ...(values.port ? { port: wholeNumber(values.port, 'port') } : {}),
    ...(values.host ? { host: values.host } : {}),
  });
  if (!['api', 'worker', 'all'].includes(config.role)) throw new UsageError('--role must be api, worker or all');
  const now = Date.now();

  if (command === 'serve') {
    const service = await createService(config, { logger: true, migrate: values.migrate });
    if (config.webhookAllowPrivate || config.webhookAllowInsecure) {
      service.ctx.log.warn('MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE / _INSECURE is on: outbound requests may reach private or plain-http destinations. Never use this in production.');
    }
    if (armedFaultPoints().length) service.ctx.log.warn(`MEDIAFORGE_FAULT_POINTS is set (${armedFaultPoints().join(', ')}): this process kills itself when it reaches them. Tests only.`);
    service.worker?.start();
    if (service.app) {
      // A burst of connections (thousands of held waits) overflows the default backlog of 511: SYNs are dropped and clients see resets.
      const address = await service.app.listen({ port: config.port, host: config.host, backlog: 8192 });
      console.log(`mediaforge listening on ${address} (database ${config.dbUrl}, role ${config.role})`);
    } else console.log(`mediaforge worker running (database ${config.dbUrl})`);
    const stop = async () => {
      await service.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return new Promise<number>(() => {});
  }

  const db = await openServiceDb(config);
  try {
    if (command === 'migrate') {
      const { applied } = await migrateToLatest(db);
      print(values.json ?? false, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
      return 0;
    }
    if (command === 'accounts' && sub === 'create') {
      const language = values.language ?? null;
      const created = await createAccount(db, { credits: wholeNumber(values.credits ?? '0', 'credits'), language, now });
      print(values.json ?? false, { ...created }, `account ${created.accountId}\napi key ${created.apiKey}\nwebhook secret ${created.webhookSecret}\n(the key and the secret are shown once)`);
      return 0;
    }
    if (command === 'keys' && sub === 'create') {
      if (!values.account) throw new UsageError('--account is required');
      const { apiKey, keyId } = await createKey(db, values.account, values.workspace ?? 'personal', now);
      print(values.json ?? false, { apiKey, keyId }, `api key ${apiKey} (${keyId}); shown once`);
      return 0;
    }
    if (command === 'keys' && sub === 'revoke') {
      if (!values.key) throw new UsageError('--key is required');
      const revoked = await revokeKey(db, values.key, now);
      print(values.json ?? false, { revoked }, revoked ? 'revoked' : 'no such active key');
      return revoked ? 0 : 1;
    }
    if (command === 'credits' && sub === 'add') {
      if (!values.account) throw new UsageError('--account is required');
      const credits = wholeNumber(values.credits, 'credits', 1);
      await addCredits(db, values.account, credits, now);
      print(values.json ?? false, { accountId: values.account, added: credits }, `added ${credits} credits to ${values.account}`);
      return 0;
    }
    if (command === 'accounts' && sub === 'set') {
      if (!values.account) throw new UsageError('--account is required');
      const payloadVersion = values['payload-version'] === undefined ? undefined : wholeNumber(values['payload-version'], 'payload-version', 1);
      await setAccountWebhookSettings(db, values.account, { language: values.language, payloadVersion });
      print(values.json ?? false, { accountId: values.account, ...(values.language !== undefined ? { language: values.language } : {}), ...(payloadVersion !== undefined ? { payloadVersion } : {}) }, `updated ${values.account}`);
      return 0;
    }
    if (command === 'webhooks') return await webhooksCommand(db, sub, positionals[2], values, outboundPolicy(config), now);
    if (command === 'entities') {
      const code = await entitiesCommand(db, sub, values, now);
      if (code !== undefined) return code;
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  } finally {
    await db.close();
  }
}

type Values = { json?: boolean; account?: string; url?: string; events?: string; endpoint?: string; limit?: string };

async function webhooksCommand(db: Awaited<ReturnType<typeof openServiceDb>>, sub: string | undefined, arg: string | undefined, values: Values, policy: ReturnType<typeof outboundPolicy>, now: number): Promise<number> {
  const json = values.json ?? false;
  const account = () => {
    if (!values.account) throw new UsageError('--account is required');
    return values.account;
  };
  try {
    if (sub === 'add') {
      if (!values.url) throw new UsageError('--url is required');
      if (!values.events) throw new UsageError('--events is required');
      const added = await addEndpoint(db, { accountId: account(), url: values.url, events: values.events, policy, now });
      print(json, { endpointId: added.endpointId, secret: added.secret }, `endpoint ${added.endpointId} (${added.events.join(', ')})\nsigning secret ${added.secret}\n(the secret is shown once)`);
      return 0;
    }
    if (sub === 'list') {
      const endpoints = await listEndpoints(db, account(), now);
      print(json, { endpoints }, endpoints.map((e) => `${e.endpointId} ${e.enabled ? 'enabled ' : 'disabled'} ${e.url} ${e.events.join(',')}`).join('\n') || 'no endpoints');
      return 0;
    }
    if (sub === 'disable') {
      if (!values.endpoint) throw new UsageError('--endpoint is required');
      const disabled = await disableEndpoint(db, account(), values.endpoint, now);
      print(json, { disabled }, disabled ? 'disabled' : 'no such enabled endpoint');
      return disabled ? 0 : 1;
    }
    if (sub === 'enable') {
      if (!values.endpoint) throw new UsageError('--endpoint is required');
      const enabled = await enableEndpoint(db, account(), values.endpoint);
      print(json, { enabled }, enabled ? 'enabled' : 'no such disabled endpoint');
      return enabled ? 0 : 1;
    }
    if (sub === 'delete') {
      if (!values.endpoint) throw new UsageError('--endpoint is required');
      const deleted = await deleteEndpoint(db, account(), values.endpoint);
      print(json, { deleted }, deleted ? 'deleted' : 'no such endpoint');
      return deleted ? 0 : 1;
    }
    if (sub === 'rotate-secret') {
      if (values.endpoint) {
        const rotated = await rotateEndpointSecret(db, account(), values.endpoint, now);
        print(json, rotated, `endpoint ${rotated.endpointId} signing secret ${rotated.secret}\n(shown once; the previous secret also signs until ${rotated.previousValidUntil})`);
      } else {
        const webhookSecret = await rotateAccountSecret(db, account());
        print(json, { accountId: values.account, webhookSecret }, `webhook signing secret ${webhookSecret}\n(shown once; in effect now, also for deliveries being retried)`);
      }
      return 0;
    }
    if (sub === 'deliveries') {
      const deliveries = await listDeliveries(db, account(), values.limit === undefined ? 50 : wholeNumber(values.limit, 'limit', 1));
      print(json, { deliveries }, deliveries.map((d) => `${d.deliveryId} ${d.taskId} ${d.kind} ${d.state} attempts=${d.attempts} last=${d.lastStatus ?? d.lastError ?? '-'}`).join('\n') || 'no deliveries');
      return 0;
    }
    if (sub === 'resend') {
      if (!arg) throw new UsageError('webhooks resend needs a DELIVERY_ID');
      const resent = await resendDelivery(db, arg, now);
      print(json, resent, `delivery ${resent.deliveryId} scheduled again`);
      return 0;
    }
  } catch (error) {
    if (error instanceof WebhookAdminError) {
      if (json) console.log(JSON.stringify({ error: error.message }));
      else console.error(`mediaforge: ${error.message}`);
      return 1;
    }
    throw error;
  }
  throw new UsageError(`unknown command: webhooks ${sub ?? ''}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error) => {
    console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : `mediaforge: ${(error as Error).message}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
