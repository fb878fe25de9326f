/**
 * Path matching over the route table: exact segments and `:param` segments, grouped by segment count.
 * @module
 */
import type { Operation, RouteDef } from './context.ts';

interface Compiled {
  segments: readonly string[];
  /** Indexes of `:param` segments. */
  paramAt: readonly number[];
  methods: RouteDef['methods'];
  /** The Allow header value: the route's methods, plus HEAD where GET exists. */
  allow: string;
}

/** The result of {@link Router.match}. */
export interface RouteMatch {
  params: string[];
  /** The operation for the method (HEAD uses GET), or undefined when the path lacks it. */
  operation: Operation | undefined;
  allow: string;
}

/** A compiled route table. */
export interface Router {
  /** Match a path (without query); null when no route has this path. */
  match(method: string, path: string): RouteMatch | null;
}

/** Compile a route table. */
export function createRouter(routes: readonly RouteDef[]): Router {
  const bySize = new Map<number, Compiled[]>();
  for (const route of routes) {
    const segments = route.path.split('/');
    const paramAt: number[] = [];
    segments.forEach((s, i) => {
      if (s.startsWith(':')) paramAt.push(i);
    });
    const names = Object.keys(route.methods);
    if (names.includes('GET')) names.splice(names.indexOf('GET') + 1, 0, 'HEAD');
    const compiled: Compiled = { segments, paramAt, methods: route.methods, allow: names.join(', ') };
    const list = bySize.get(segments.length) ?? [];
    list.push(compiled);
    bySize.set(segments.length, list);
  }
  return {
    match(method, path) {
      const parts = path.split('/');
      const candidates = bySize.get(parts.length);
      if (!candidates) return null;
      outer: for (const route of candidates) {
        const segs = route.segments;
        for (let i = 0; i < segs.length; i++) {
          const s = segs[i]!;
          if (s.charCodeAt(0) === 58 /* : */) {
            if (parts[i] === '') continue outer;
          } else if (s !== parts[i]) continue outer;
        }
        const params = route.paramAt.map((i) => parts[i]!);
        const key = (method === 'HEAD' ? 'GET' : method) as keyof RouteDef['methods'];
        const operation = Object.hasOwn(route.methods, key) ? route.methods[key] : undefined;
        return { params, operation, allow: route.allow };
      }
      return null;
    },
  };
}
