/**
 * Path matching over contract entries (or anything that carries one, like the server's bindings):
 * exact segments and `{param}` segments, grouped by segment count.
 * @module
 */
import type { AnyOperation } from '../contract/define.ts';
import { MAX_REQUEST_BODY } from '../limits.ts';

interface Compiled<T> {
  segments: readonly string[];
  /** Indexes of `{param}` segments and their names. */
  paramAt: readonly number[];
  paramNames: readonly string[];
  methods: Map<string, T>;
  /** The Allow header value: the path's methods, plus HEAD where GET exists. */
  allow: string;
}

/** The result of {@link Router.match}. */
export interface RouteMatch<T = AnyOperation> {
  /** Path parameters by name (frozen: a match may be shared by requests of one path). */
  readonly params: Readonly<Record<string, string>>;
  /** The operation for the method (HEAD uses GET), or undefined when the path lacks it. */
  operation: T | undefined;
  allow: string;
}

/** A compiled route table. */
export interface Router<T = AnyOperation> {
  /** Match a path (without query); null when no operation has this path. */
  match(method: string, path: string): RouteMatch<T> | null;
  /** The contract entry of a route target. */
  operationOf(target: T): AnyOperation;
}

/**
 * Compile route targets (contract entries, or bindings with `operationOf`) into a router. Two targets
 * with one method and path are refused.
 */
export function createRouter<T = AnyOperation>(targets: readonly T[], operationOf: (target: T) => AnyOperation = (t) => t as AnyOperation): Router<T> {
  const byPath = new Map<string, Compiled<T>>();
  for (const target of targets) {
    const op = operationOf(target);
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
    route.methods.set(op.method, target);
  }
  const bySize = new Map<number, Compiled<T>[]>();
  for (const route of byPath.values()) {
    const names = [...route.methods.keys()];
    if (names.includes('GET')) names.splice(names.indexOf('GET') + 1, 0, 'HEAD');
    route.allow = names.join(', ');
    const list = bySize.get(route.segments.length) ?? [];
    list.push(route);
    bySize.set(route.segments.length, list);
  }
  const recent = new Map<string, RouteMatch<T> | null>();
  return {
    operationOf,
    match(method, path) {
      // Clients repeat their paths (one document, one job): a bounded memo of recent answers spares
      // the split and the scan. Answers are never mutated by callers.
      const key = `${method} ${path}`;
      const known = recent.get(key);
      if (known !== undefined) return known;
      const found = scan(method, path);
      if (recent.size >= RECENT_MAX) recent.clear();
      recent.set(key, found);
      return found;
    },
  };

  function scan(method: string, path: string): RouteMatch<T> | null {
    {
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
        return Object.freeze({ params: Object.freeze(params), operation, allow: route.allow });
      }
      return null;
    }
  }
}

/** Most remembered matches of one router (cleared when full). */
const RECENT_MAX = 1024;

/**
 * The largest request body the operation at `method` and `url` accepts: its `bytes.maxBytes`, else
 * the contract's 256 KB. The one rule the handler and every transport (worker host included) use.
 */
export function bodyLimitOf<T>(router: Router<T>): (method: string, url: string) => number {
  return (method, url) => {
    const target = targetOf(router, method, url);
    return target === undefined ? MAX_REQUEST_BODY : (router.operationOf(target).input.bytes?.maxBytes ?? MAX_REQUEST_BODY);
  };
}

/** True when the operation at `method url` takes raw bytes, which the transport may then hand over as a stream. */
bodyLimitOf.bytesOperation = function bytesOperation<T>(router: Router<T>, method: string, url: string): boolean {
  const target = targetOf(router, method, url);
  return target !== undefined && router.operationOf(target).input.bytes !== undefined;
};

function targetOf<T>(router: Router<T>, method: string, url: string): T | undefined {
  const q = url.indexOf('?');
  return router.match(method, q === -1 ? url : url.slice(0, q))?.operation;
}
