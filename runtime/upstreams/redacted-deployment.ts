import type { BlobSource } from '../blobs/blob-store.js';
import type { Deployment, DeploymentStatus } from '../deployments/deployment.js';
import type { Redactor } from './secret-redactor.js';
import { UpstreamError } from '../deployments/upstream-error.js';

/**
 * The error as it may leave an adapter: its message (and an UpstreamError's reason) redacted. A
 * new object, so nothing else it carried (Node's `input` URL, a `cause`, a stack with the old
 * message) reaches a log; an UpstreamError keeps its class (and subclass: a result too large stays final), anything else stays a plain Error, so
 * the worker classifies it as before.
 */
function redactedError(error: unknown, redact: Redactor): Error {
  if (error instanceof UpstreamError) return error.rewritten(redact);
  return new Error(redact(error instanceof Error ? error.message : String(error)));
}

/** A download's chunks as they come; a failure while it streams is redacted like any other. */
function redactedStream(bytes: BlobSource, redact: Redactor): BlobSource {
  if (bytes instanceof Uint8Array) return bytes;
  return {
    async *[Symbol.asyncIterator]() {
      try {
        yield* bytes as AsyncIterable<Uint8Array | string>;
      } catch (error) {
        throw redactedError(error, redact);
      }
    },
  };
}

function redactedStatus(status: DeploymentStatus, redact: Redactor): DeploymentStatus {
  if (status.state === 'failed') return { ...status, reason: redact(status.reason) };
  if (status.state === 'canceled')
    return status.reason === undefined ? status : { ...status, reason: redact(status.reason) };
  if (status.state === 'succeeded')
    return {
      ...status,
      outputs: status.outputs.map((output) => ({ ...output, bytes: redactedStream(output.bytes, redact) })),
    };
  return status;
}

/**
 * An upstream adapter as the rest of the service sees it: every text that comes out of it (an
 * error's message and reason from start, poll, cancel and release, a failed job's reason, a
 * download's failure) has been through the upstream's redactor (./secret-redactor.ts) first, so
 * no task, stored failure, log, status or metric can show the operator's key whatever the
 * upstream echoed. Built once per upstream (./build.ts); the adapter's other members pass through.
 */
export function redactedDeployment(inner: Deployment, redact: Redactor): Deployment {
  const guarded = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw redactedError(error, redact);
    }
  };
  const { cancel, release, verifyCallback, firstPollAfterMs, acceptsInput, inputRefusal, probe, close, findJob } =
    inner;
  return {
    name: inner.name,
    ...(inner.kind !== undefined ? { kind: inner.kind } : {}),
    ...(inner.idempotentSubmit !== undefined ? { idempotentSubmit: inner.idempotentSubmit } : {}),
    ...(inner.callbacks !== undefined ? { callbacks: inner.callbacks } : {}),
    ...(inner.submitTimeoutMs !== undefined ? { submitTimeoutMs: inner.submitTimeoutMs } : {}),
    ...(inner.referenceLinks !== undefined ? { referenceLinks: inner.referenceLinks } : {}),
    accepts: (model) => inner.accepts(model),
    isAvailable: () => inner.isAvailable(),
    start: (job) => guarded(() => inner.start(job)),
    poll: async (handle, job) => redactedStatus(await guarded(() => inner.poll(handle, job)), redact),
    ...(acceptsInput ? { acceptsInput: (model, input) => acceptsInput.call(inner, model, input) } : {}),
    ...(inputRefusal ? { inputRefusal: (model, input) => inputRefusal.call(inner, model, input) } : {}),
    ...(firstPollAfterMs ? { firstPollAfterMs: (job) => firstPollAfterMs.call(inner, job) } : {}),
    ...(cancel ? { cancel: (handle, job) => guarded(() => cancel.call(inner, handle, job)) } : {}),
    ...(findJob ? { findJob: (job, at) => guarded(() => findJob.call(inner, job, at)) } : {}),
    ...(release ? { release: (handle, job) => guarded(() => release.call(inner, handle, job)) } : {}),
    ...(verifyCallback ? { verifyCallback: (request) => verifyCallback.call(inner, request) } : {}),
    ...(probe
      ? {
          probe: async (upstreamModel?: string) => {
            const found = await guarded(() => probe.call(inner, upstreamModel));
            return { ...found, detail: redact(found.detail) };
          },
        }
      : {}),
    ...(close ? { close: () => close.call(inner) } : {}),
  };
}
