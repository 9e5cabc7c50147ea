import { createHmac } from 'node:crypto';

/** Where the service receives an upstream's "the job ended" (runtime/http/routes/upstream-callback.ts). */
export const UPSTREAM_CALLBACK_PATH = '/upstream-callbacks';

/** The token that signs one task's upstream callback on one deployment (HMAC with the service's secret). */
export function upstreamCallbackToken(secret: string, deployment: string, taskId: string): string {
  return createHmac('sha256', secret).update(`upstream-callback.${deployment}.${taskId}`).digest('base64url');
}

/**
 * The upstream callback: the URL an upstream is handed to say a job ended (the other direction
 * from the task callback, the client's `callBackUrl`). It names the deployment and the task and is
 * signed with the service's secret.
 */
export function upstreamCallbackUrl(publicUrl: string, secret: string, deployment: string, taskId: string): string {
  const path = `${UPSTREAM_CALLBACK_PATH}/${encodeURIComponent(deployment)}/${encodeURIComponent(taskId)}`;
  return `${publicUrl}${path}?sig=${upstreamCallbackToken(secret, deployment, taskId)}`;
}
