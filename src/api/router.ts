/**
 * Path matching over the operation registry: exact segments and `{param}` segments, grouped by
 * segment count.
 * @module
 */
import type { AnyOperation } from './registry/operation.ts';

interface Compiled {
  segments: readonly string[];
  /** Indexes of `{param}` segments and their names. */
  paramAt: readonly number[];
  paramNames: readonly string[];
  methods: Map<string, AnyOperation>;
  /** The Allow header value: the path's methods, plus HEAD where GET exists. */
  allow: string;
}

/** The result of {@link Router.match}. */
export interface RouteMatch {
  /** Path parameters by name. */
  params: Record<string, string>;
  /** The operation for the method (HEAD uses GET), or undefined when the path lacks it. */
  operation: AnyOperation | undefined;
  allow: string;
}

/** A compiled route table. */
export interface Router {
  /** Match a path (without query); null when no operation has this path. */
  match(method: string, path: string): RouteMatch | null;
}

/** Compile the operations into a router. Two operations with one method and path are refused. */
export function createRouter(operations: readonly AnyOperation[]): Router {
  const byPath = new Map<string, Compiled>();
  for (const op of operations) {
    let route = byPath.get(op.path);
    if (!route) {
      const segments = op.path.split('/');
      const paramAt: number[] = [];
      const paramNames: string[] = [];
      segments.forEach((s, i) => {
        if (s.startsWith('{')) {
          paramAt.push(i);
          paramNames.push(s.slice(1, -1));
        }
      });
      route = { segments, paramAt, paramNames, methods: new Map(), allow: '' };
      byPath.set(op.path, route);
    }
    if (route.methods.has(op.method)) throw new Error(`two operations for ${op.method} ${op.path}`);
    route.methods.set(op.method, op);
  }
  const bySize = new Map<number, Compiled[]>();
  for (const route of byPath.values()) {
    const names = [...route.methods.keys()];
    if (names.includes('GET')) names.splice(names.indexOf('GET') + 1, 0, 'HEAD');
    route.allow = names.join(', ');
    const list = bySize.get(route.segments.length) ?? [];
    list.push(route);
    bySize.set(route.segments.length, list);
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
          if (s.charCodeAt(0) === 123 /* { */) {
            if (parts[i] === '') continue outer;
          } else if (s !== parts[i]) continue outer;
        }
        const params: Record<string, string> = {};
        for (let k = 0; k < route.paramAt.length; k++) params[route.paramNames[k]!] = parts[route.paramAt[k]!]!;
        const operation = route.methods.get(method === 'HEAD' ? 'GET' : method);
        return { params, operation, allow: route.allow };
      }
      return null;
    },
  };
}
