/** `mediaforge webhooks ...`: account endpoints, the callback secret, deliveries (runtime/webhooks/admin.ts). */
import { outboundPolicy } from '../../config.js';
import {
  addEndpoint,
  deleteEndpoint,
  disableEndpoint,
  enableEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateAccountSecret,
  rotateEndpointSecret,
} from '../../webhooks/admin.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import type { AuditAction } from '../../audit/audit-log.js';
import { recordCliAction } from '../../operator/operator-actions.js';
import { printSafe } from '../terminal-text.js';
import { wholeNumber } from '../usage-error.js';
import { refusalOf } from '../../console-refusal.js';

export async function webhooksCommand(sub: string, { values, positionals }: CommandInput): Promise<number> {
  const json = values.json === true;
  const say = (value: Record<string, unknown>, text: string) => printSafe(json, value, text);
  const account = values.account as string;
  const endpoint = values.endpoint as string;
  const config = commandConfig(values);
  const limit =
    sub === 'deliveries' && values.limit !== undefined ? wholeNumber(values.limit as string, 'limit', 1) : 50;
  const now = Date.now();
  try {
    return await withCommandDb(config, async (db) => {
      // Every change is an operator action: its audit row (actor `cli`), the account in its details.
      const audit = (action: AuditAction, target: string, details: Record<string, unknown> = {}) =>
        recordCliAction(db, action, target, { accountId: account, ...details }, now);
      switch (sub) {
        case 'add': {
          const added = await addEndpoint(db, {
            accountId: account,
            url: values.url as string,
            events: values.events as string,
            policy: outboundPolicy(config),
            now,
          });
          await audit('webhook.add', added.endpointId, { url: values.url, events: added.events });
          say(
            { endpointId: added.endpointId, secret: added.secret },
            `endpoint ${added.endpointId} (${added.events.join(', ')})\nsigning secret ${added.secret}\n(the secret is shown once)`,
          );
          return 0;
        }
        case 'list': {
          const endpoints = await listEndpoints(db, account, now);
          say(
            { endpoints },
            endpoints
              .map((e) => `${e.endpointId} ${e.enabled ? 'enabled ' : 'disabled'} ${e.url} ${e.events.join(',')}`)
              .join('\n') || 'no endpoints',
          );
          return 0;
        }
        case 'disable': {
          const disabled = await disableEndpoint(db, account, endpoint, now);
          if (disabled) await audit('webhook.disable', endpoint);
          say({ disabled }, disabled ? 'disabled' : 'no such enabled endpoint');
          return disabled ? 0 : 1;
        }
        case 'enable': {
          const enabled = await enableEndpoint(db, account, endpoint);
          if (enabled) await audit('webhook.enable', endpoint);
          say({ enabled }, enabled ? 'enabled' : 'no such disabled endpoint');
          return enabled ? 0 : 1;
        }
        case 'delete': {
          const deleted = await deleteEndpoint(db, account, endpoint);
          if (deleted) await audit('webhook.delete', endpoint);
          say({ deleted }, deleted ? 'deleted' : 'no such endpoint');
          return deleted ? 0 : 1;
        }
        case 'rotate-secret': {
          if (endpoint) {
            const rotated = await rotateEndpointSecret(db, account, endpoint, now);
            await audit('webhook.rotate-secret', endpoint);
            say(
              rotated,
              `endpoint ${rotated.endpointId} signing secret ${rotated.secret}\n(shown once; the previous secret also signs until ${rotated.previousValidUntil})`,
            );
          } else {
            const webhookSecret = await rotateAccountSecret(db, account);
            await audit('webhook.rotate-secret', account);
            say(
              { accountId: account, webhookSecret },
              `webhook signing secret ${webhookSecret}\n(shown once; in effect now, also for deliveries being retried)`,
            );
          }
          return 0;
        }
        case 'deliveries': {
          const deliveries = await listDeliveries(db, account, limit);
          say(
            { deliveries },
            deliveries
              .map(
                (d) =>
                  `${d.deliveryId} ${d.taskId} ${d.kind} ${d.state} attempts=${d.attempts} last=${d.lastStatus ?? d.lastError ?? '-'}`,
              )
              .join('\n') || 'no deliveries',
          );
          return 0;
        }
        case 'resend': {
          const resent = await resendDelivery(db, positionals[0], now);
          await audit('webhook.resend', resent.deliveryId);
          say(resent, `delivery ${resent.deliveryId} scheduled again`);
          return 0;
        }
        default:
          throw new Error(`no webhooks command ${sub}`);
      }
    });
  } catch (error) {
    const refusal = refusalOf(error);
    if (!refusal) throw error;
    if (json) console.log(JSON.stringify({ error: refusal.detail }));
    else console.error(`mediaforge: ${refusal.detail}`);
    return 1;
  }
}
