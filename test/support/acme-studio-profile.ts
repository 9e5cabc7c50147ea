/**
 * spec/providers/acme-studio.yaml: a profile using the named pieces beyond issue 27's example
 * (jwt-hs256, a submit path per mode and a poll that repeats it, typed content items, the seconds
 * to the deadline clamped, a lookup by the task's id, a state that is a condition, a follow-up
 * request for the link, a probe). Its server is ./acme-studio-server.ts.
 */
export const ACME_STUDIO_PROFILE = `protocol: acme-studio
summary: Acme Studio, a provider with a JWT, a path per mode and a second request for the link.
auth: jwt-hs256
submit:
  path: { text-to-video: /v1/studio/text, image-to-video: /v1/studio/image }
  body:
    model: "{upstreamModel}"
    content:
      - { type: text, text: "{input.prompt}" }
      - { type: image_url, image_url: { url: "{input.image_url}" }, role: first_frame }
      - { type: image_url, image_url: { url: "{input.last_image_url}" }, role: last_frame }
    expires_after: "{deadlineSeconds}"
    ref: "{taskId}"
  handle: { id: data.job_id }
  lookup: { method: GET, path: "{submitPath}/{taskId}" }
  deadlineSeconds: { min: 3600, max: 7200 }
poll:
  path: "{submitPath}/{id}"
  state: data.status
  states:
    pending: queued
    ended: { when: data.file_id, is: succeeded, otherwise: failed }
  reason: data.error
  capture: { fileId: data.file_id }
result:
  urls: file.download_url
  follow: { method: GET, path: "/v1/files/{fileId}" }
probe: { method: GET, path: /v1/studio/ping, ok: [200] }
errors: { code: code, ok: [0], reason: message, classes: { 1002: unauthorized, 1409: rejected } }
otherFields: pass
`;
