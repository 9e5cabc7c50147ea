/**
 * The methods each registered path answers, so that a known path asked with another method gets
 * 405 with `Allow` (in the envelope, or the compatible layer's error shape under /v1) instead of the
 * 404 of a path that does not exist. Fastify tells every route to an onRoute hook; its patterns
 * (`/api/v1/files/:fileId/commit`, `/docs/*`) become regular expressions here.
 */
import type { FastifyInstance } from 'fastify';

interface PathMethods {
  pattern: RegExp;
  methods: Set<string>;
}

function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment === '*'
          ? '.*'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\*/g, '.*'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

export class RouteMethods {
  private readonly paths = new Map<string, PathMethods>();

  /** Records every route registered on `app` from now on (call before the routes are added). */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const entry = this.paths.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() };
      for (const method of [route.method].flat()) entry.methods.add(method.toUpperCase());
      this.paths.set(route.url, entry);
    });
  }

  /** The methods that `path` answers (sorted), or none when no route matches it. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: own } of this.paths.values())
      if (pattern.test(path)) for (const method of own) methods.add(method);
    return [...methods].sort();
  }
}
