/**
 * The `models:` section of a deployments file (runtime/routing/deployments-file.ts) as the suites
 * write it most: each model routed to the one upstream named, as lines to join with the upstreams.
 */
export const modelsSection = (routes: Record<string, string>): string[] => [
  'models:',
  ...Object.entries(routes).flatMap(([model, upstream]) => [`  ${model}:`, `    - upstream: ${upstream}`]),
];
