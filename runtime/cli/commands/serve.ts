/**
 * `mediaforge serve`: the service. The HTTP server listens first and the worker starts only once it
 * does: a second `serve` on a port in use exits at once (status 1) without having run any task of the
 * first. SIGTERM and SIGINT close the server, stop the worker after its items in flight (those still
 * running after MEDIAFORGE_SHUTDOWN_GRACE_SECONDS are aborted and left to run again), close the
 * database and exit 0 (`npm start` runs this process as npm's direct child: scripts/start.mjs).
 */
import { paymentSettings } from '../../payments/payment-settings.js';
import { parseBlobStoreSetting } from '../../blobs/blob-store-setting.js';
import { configFromEnv, type Environment, processEnvironment } from '../../config.js';
import { createService } from '../../service.js';
import { loadDeploymentsFile } from '../../routing/deployments-file.js';
import { loopbackLinkProblem } from '../../routing/link-reach.js';
import { probeFailed, probeLine, probeUpstreams } from '../../routing/probe-upstreams.js';
import { recordProbe } from '../../routing/probe-health.js';
import type { CommandInput } from '../commands.js';
import { UsageError, wholeNumber } from '../usage-error.js';

export async function serve({ values }: CommandInput): Promise<number> {
  const env = processEnvironment({
    MEDIAFORGE_DB: typeof values.db === 'string' ? values.db : undefined,
    MEDIAFORGE_ROLE: typeof values.role === 'string' ? values.role : undefined,
    MEDIAFORGE_DEPLOYMENTS: typeof values.deployments === 'string' ? values.deployments : undefined,
  });
  const config = configFromEnv(env, {
    ...(typeof values.port === 'string' ? { port: wholeNumber(values.port, 'port') } : {}),
    ...(typeof values.host === 'string' ? { host: values.host } : {}),
  });
  if (!['api', 'worker', 'all'].includes(config.role))
    throw new UsageError(`--role must be api, worker or all (got ${config.role})`);
  if (!Number.isInteger(config.port) || config.port > 65_535)
    throw new UsageError(`the port must be a whole number up to 65535 (got ${config.port})`);

  const problem = storeSettingProblem(env);
  if (problem) throw new Error(problem);
  // Read once here and handed to the service: a remote upstream that would be sent loopback links is refused before anything starts.
  const plan = config.deploymentsFile ? loadDeploymentsFile(config.deploymentsFile, config.environment) : undefined;
  const unreachable = loopbackLinkProblem(config.publicUrl, plan);
  if (unreachable) throw new Error(unreachable);

  const service = await createService(config, {
    logger: true,
    migrate: values.migrate === true,
    ...(plan ? { deploymentsPlan: plan } : {}),
  });
  try {
    await service.ctx.blobs.checkWritable?.();
  } catch (error) {
    await service.close().catch(() => {});
    throw error;
  }
  if (config.webhookAllowPrivate || config.webhookAllowInsecure) {
    service.ctx.log.warn(
      'MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE / _INSECURE is on: outbound requests may reach private or plain-http destinations. Never use this in production.',
    );
  }
  if (service.app && !config.metricsToken)
    service.ctx.log.info(
      'MEDIAFORGE_METRICS_TOKEN is not set: /metrics and the detail of /readyz answer loopback callers only (set it to scrape from elsewhere, with Authorization: Bearer <token>)',
    );
  const payments = paymentSettings(config);
  // One line either way; the secrets themselves are never written.
  if (!payments.on) service.ctx.log.info(payments.reason);
  else service.ctx.log.info(`payments on: Stripe Checkout, customers return to ${payments.returnOrigin}`);
  const armed = service.ctx.faults.armed();
  if (armed.length)
    service.ctx.log.warn(
      `MEDIAFORGE_FAULT_POINTS is set (${armed.join(', ')}): this process kills itself when it reaches them. Tests only.`,
    );
  if (service.app) {
    try {
      // A burst of connections (thousands of held waits) overflows the default backlog of 511: SYNs are dropped and clients see resets.
      const address = await service.app.listen({ port: config.port, host: config.host, backlog: 8192 });
      // Port 0 picks a free port: links (media, upload tickets, upstream callbacks) name the one it got.
      if (!env.MEDIAFORGE_PUBLIC_URL && config.port === 0) config.publicUrl = address;
      console.log(`mediaforge listening on ${address} (database ${config.dbUrl}, role ${config.role})`);
    } catch (error) {
      await service.close().catch(() => {});
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'EADDRINUSE'
          ? `port ${config.port} on ${config.host} is already in use (another mediaforge? set PORT or --port)`
          : (error as Error).message;
      console.error(`mediaforge: cannot listen: ${reason}`);
      return 1;
    }
  }
  service.worker?.start();
  if (!service.app) console.log(`mediaforge worker running (database ${config.dbUrl})`);
  // Each upstream asked once at start, in the background: a dead one or a refused key is in the log
  // at once and its state is `down` before any customer's task is let through; serving does not wait for it.
  probeUpstreams(service.ctx.deployments).then(
    async (probes) => {
      for (const probe of probes) {
        if (probeFailed(probe)) service.ctx.log.warn(probeLine(probe));
        else service.ctx.log.info(probeLine(probe));
        await recordProbe(service.ctx, probe.deployment, probe);
      }
    },
    (error) => service.ctx.log.error({ err: error }, 'upstream probe failed'),
  );

  // Resolves only when a signal stopped the service; the process then exits even if a client
  // library left a timer or socket behind.
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      service.ctx.log.info(`${signal}: stopping`);
      service.close().then(
        () => exit(0),
        (error) => {
          console.error(`mediaforge: stopping failed: ${(error as Error).message}`);
          exit(1);
        },
      );
    };
    const exit = (code: number) => {
      resolve(code);
      setImmediate(() => process.exit(code));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** A media-store setting that names nothing the service knows, in one line (the service would otherwise fall back silently). */
function storeSettingProblem(env: Environment): string | undefined {
  const setting = parseBlobStoreSetting(env.MEDIAFORGE_BLOB_STORE);
  if ('problem' in setting) return setting.problem;
  const checksum = env.MEDIAFORGE_S3_CHECKSUM;
  if (checksum && !['when_supported', 'when_required'].includes(checksum))
    return `MEDIAFORGE_S3_CHECKSUM must be when_supported or when_required (got ${checksum})`;
  const links = env.MEDIAFORGE_MEDIA_LINKS;
  if (links && !['redirect', 'proxy'].includes(links))
    return `MEDIAFORGE_MEDIA_LINKS must be redirect or proxy (got ${links})`;
  return undefined;
}
