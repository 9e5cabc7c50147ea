/**
 * spec/providers/acme.yaml as a maintainer writes it from issue 27's example: the profile the
 * maintainer's-path tests add to a copy of the checkout (test/deployments/profile-maintainer.test.ts)
 * and break one edit at a time (test/generator/profiles.test.ts). Its server is ./acme-server.ts.
 */
export const ACME_PROFILE = `# Acme's render API (issue 27's example): a profile written as a maintainer would.
protocol: acme
summary: Acme's render API
auth: bearer
headers: { X-Acme-Version: "2025-01-01" }
submit:
  method: POST
  path: /v2/renders
  body:
    engine: "{upstreamModel}"
    params: "{input}"
    text: "{input.prompt}"
  handle: { id: render.uid }
poll:
  method: GET
  path: /v2/renders/{id}
  state: render.phase
  states: { waiting: queued, working: running, done: succeeded, broken: failed, stopped: canceled }
  reason: render.problem
  progress: render.percent
result:
  urls: render.files[*].href
cancel: { method: POST, path: "/v2/renders/{id}/stop" }
probe: { method: GET, path: /v2/renders/probe-0, ok: [404] }
errors:
  code: status.code
  ok: [0]
  reason: status.message
  classes: { 42: busy, 7: rejected }
fields: { prompt: text }
otherFields: pass
`;
