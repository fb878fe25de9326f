/**
 * `createBrowserApp`: the person's side of the server — sign-in by one-time link, the console, agent
 * tokens, document pages that follow changes live, reviews and publication, and the request
 * inspector — as a handler mounted in front of the API handler.
 * @remarks Installable: an embedding program that does not mount it keeps the API handler's answers
 * (401 notes on `/documents/…` and `/reviews/…`). Mounted, it answers its own paths and passes every
 * other request (the API, the operator API, public pages) to the API handler unchanged.
 * - Sessions and sign-in links are the engine's (`engine.sessions`, stored), so several processes
 *   share them; the operator's `POST /operator/v1/sign-in-links` is an operation of the API handler.
 * - It reads and follows the engine through its public services only (`engine.jobs`,
 *   `engine.documents.watch`, `engine.operator`, `engine.publication`, `engine.sessions`).
 * - Every form carries the session's CSRF token in a hidden field `csrf`; a post without the right
 *   one is 403 and changes nothing. Cookies are HttpOnly and SameSite=Strict (Secure over https).
 * - Pages carry a strict Content-Security-Policy (`frame-ancestors 'none'`), `X-Frame-Options: DENY`
 *   and `Cache-Control: no-store`.
 * @module
 */
import { DEFAULT_LOCAL_ACCOUNT } from '../../src/actor.ts';
import { constantTimeEqual, randomSecret } from '../../src/auth/tokens.ts';
import type { Actor } from '../../src/actor.ts';
import { isoTimestamp } from '../../src/clock.ts';
import type { PublicEngine } from '../../src/engine.ts';
import { isServiceError, type FieldError } from '../../src/errors.ts';
import { isTerminal } from '../../src/jobs/states.ts';
import type { Handler, PlainRequest, PlainResponse } from '../../src/api/types.ts';
import { accountActor } from '../../src/actor.ts';
import { APP_CSS, APP_JS, FAVICON_ICO } from './assets.ts';
import { escapeHtml } from '../../src/escape-html.ts';
import { PAGE_CSP, page, plainPage, render, seeOther, type PageViewer } from './html.ts';
import { RequestInspector, type InspectorLimits, type AnsweredRequest } from './inspector.ts';
import {
  accountJobs,
  documentBody,
  documentView,
  homeBody,
  jobOf,
  phaseLabel,
  proposalOf,
  requestsBody,
  reviewBody,
  reviewTitle,
  settingsBody,
  type TokenForm,
} from './pages.ts';
import type { Session } from '../../src/auth/sessions.ts';
import { linksAt, operationPath } from '../../src/contract/links.ts';
import { contract } from '../../src/contract/operations.ts';

/** The session cookie's name. */
export const SESSION_COOKIE = 'kw_session';

/** Options of {@link createBrowserApp}. */
export interface BrowserAppOptions {
  /** The local person's account: {@link BrowserApp.createSignInLink} defaults to it. Default `owner`. */
  localAccount?: string | undefined;
  /** Mark the cookie Secure; default: when the engine's baseUrl is https. */
  secureCookies?: boolean | undefined;
  /**
   * Let a signed-out `/documents/{ref}` pass to the API handler (its `documentPages: 'open'` view of a
   * local development server). Default false: signed out, the page is 401.
   */
  openDocumentPages?: boolean | undefined;
  /** Bounds of the request inspector's memory. */
  inspector?: InspectorLimits | undefined;
  /** Keep-alive interval of the pages' event streams in ms; default 15 000. */
  keepAliveMs?: number | undefined;
  /**
   * The live co-editing editor of the document page (served under `/assets/editor/`): its bundle,
   * asked for on the first request of an editor asset. Without it the document page stays the
   * rendered document (following versions live). The server must serve the y-websocket room at
   * `/documents/{ref}/sync` (transports/sync) with {@link BrowserApp.authorizeUpgrade}.
   */
  editorAssets?: (() => Promise<EditorAssets>) | undefined;
}

/** One file of the editor bundle. */
export interface EditorAsset {
  contentType: string;
  body: Uint8Array;
  /** Content-hashed name: cached for a year; otherwise revalidated. */
  immutable: boolean;
}

/** The editor bundle: `editor.js` (an ES module), `editor.css` and their chunks, by file name. */
export interface EditorAssets {
  files: ReadonlyMap<string, EditorAsset>;
}

/** The signed-in person of a live co-editing upgrade (transports/sync's `SyncGrant`). */
export interface PersonGrant {
  actor: Actor;
  canWrite: boolean;
  /** Follow the session while the connection is open: `ended` once it is signed out or expires. */
  watch?: (ended: (reason: string) => void) => () => void;
}

/** The installed browser app. */
export interface BrowserApp {
  /** A handler answering the browser app's paths and passing everything else to `api`. */
  mount(api: Handler): Handler;
  /** A one-time sign-in link (15 minutes) for `account` (default: the local person). */
  createSignInLink(account?: string): Promise<{ url: string; expiresAt: string }>;
  /** Feed the request inspector: pass as the API handler's `onResponse`. */
  recordRequest(event: AnsweredRequest): void;
  /** The request inspector's memory. */
  readonly inspector: RequestInspector;
  /**
   * The `authorizeUpgrade` hook of live co-editing (`attachSync`): the person of the request's
   * session cookie may edit (the document's boundary is checked by the sync server), or null (no
   * live session, or an `Origin` other than the request's own host: another site's page).
   */
  authorizeUpgrade(req: { headers: Record<string, string | string[] | undefined> }, documentRef: string): Promise<PersonGrant | null>;
}

const BROWSER_BODY_LIMIT = 64 * 1024;
const decoder = new TextDecoder();

type Route =
  | { name: 'asset'; file: 'css' | 'js' }
  | { name: 'favicon' }
  | { name: 'editor-asset'; file: string }
  | { name: 'sign-in'; secret: string }
  | { name: 'sign-in-help' }
  | { name: 'sign-out' }
  | { name: 'home' }
  | { name: 'settings' }
  | { name: 'create-token' }
  | { name: 'revoke-token'; credentialRef: string }
  | { name: 'document'; documentRef: string }
  | { name: 'document-events'; documentRef: string }
  | { name: 'review'; reviewRef: string }
  | { name: 'review-decision'; reviewRef: string }
  | { name: 'review-publication'; reviewRef: string }
  | { name: 'requests' }
  | { name: 'job-events' };

const POST_ROUTES = new Set(['sign-out', 'create-token', 'revoke-token', 'review-decision', 'review-publication']);

function route(path: string): Route | null {
  if (path === '/') return { name: 'home' };
  if (path === '/assets/app.css') return { name: 'asset', file: 'css' };
  if (path === '/assets/app.js') return { name: 'asset', file: 'js' };
  if (path === '/favicon.ico') return { name: 'favicon' };
  if (path.startsWith('/assets/editor/') && /^[A-Za-z0-9_-]+\.(?:js|css|woff2?)$/.test(path.slice(15))) return { name: 'editor-asset', file: path.slice(15) };
  if (path === '/sign-out') return { name: 'sign-out' };
  if (path === '/sign-in') return { name: 'sign-in-help' };
  if (path === '/settings/api') return { name: 'settings' };
  if (path === '/settings/api/tokens') return { name: 'create-token' };
  if (path === '/requests') return { name: 'requests' };
  if (path === '/events/jobs') return { name: 'job-events' };
  const parts = path.split('/');
  if (parts[1] === 'sign-in' && parts.length === 3) return { name: 'sign-in', secret: parts[2]! };
  if (parts[1] === 'settings' && parts[2] === 'api' && parts[3] === 'tokens' && parts[5] === 'revoke' && parts.length === 6) return { name: 'revoke-token', credentialRef: parts[4]! };
  if (parts[1] === 'documents' && parts.length === 3 && parts[2]) return { name: 'document', documentRef: parts[2] };
  if (parts[1] === 'documents' && parts.length === 4 && parts[3] === 'events') return { name: 'document-events', documentRef: parts[2]! };
  if (parts[1] === 'reviews' && parts.length === 3 && parts[2]) return { name: 'review', reviewRef: parts[2] };
  if (parts[1] === 'reviews' && parts.length === 4 && parts[3] === 'decision') return { name: 'review-decision', reviewRef: parts[2]! };
  if (parts[1] === 'reviews' && parts.length === 4 && parts[3] === 'publication') return { name: 'review-publication', reviewRef: parts[2]! };
  return null;
}

function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function formOf(request: PlainRequest): URLSearchParams {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type) || request.body === null) return new URLSearchParams();
  return new URLSearchParams(decoder.decode(request.body));
}

const FIELD_LABELS: Record<string, string> = { label: 'Label', documentRef: 'Document', requestBudget: 'Request budget', expiresInDays: 'Expires in days', scopes: 'Scopes', account: 'Account' };

/** Something to follow live: `watch(changed)` starts following and returns stop. */
interface Followed<K> {
  key: K;
  watch: (changed: () => void) => () => void;
}

function fieldMessages(fieldErrors: readonly FieldError[] | undefined, fallback: string): string[] {
  if (!fieldErrors?.length) return [fallback];
  return fieldErrors.map((fe) => `${FIELD_LABELS[fe.field.split('.')[0]!] ?? fe.field}: ${fe.message}`);
}

/**
 * Build the browser app over an engine.
 * @example
 * const app = createBrowserApp(engine, { localAccount: 'demo' });
 * const handler = app.mount(createApiHandler({ engine, operatorKey, localAccount: 'demo', onResponse: (e) => app.recordRequest(e) }));
 */
export function createBrowserApp(engine: PublicEngine, options: BrowserAppOptions = {}): BrowserApp {
  if ('operatorKey' in options) {
    // Said out loud rather than ignored: the key would otherwise stop working without a word.
    throw new TypeError('createBrowserApp: operatorKey is no longer an option of the browser app; POST /operator/v1/sign-in-links is an operation of the API handler: createApiHandler({ engine, operatorKey })');
  }
  const { sessions, baseUrl } = engine;
  const links = linksAt(baseUrl);
  const inspector = new RequestInspector(options.inspector);
  const localAccount = options.localAccount ?? DEFAULT_LOCAL_ACCOUNT;
  const secure = options.secureCookies ?? baseUrl.startsWith('https:');
  const keepAliveMs = options.keepAliveMs ?? 15_000;

  const cookieAttributes = `Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;

  async function createSignInLink(account?: string) {
    const link = await sessions.createLink(account ?? localAccount);
    return { url: links.signIn(link.secret), expiresAt: isoTimestamp(link.expiresAt) };
  }

  /** 401 for a signed-out person: a link to how to sign in and, for a document, how an agent reads it. */
  function signedOut(documentRef: string | null): PlainResponse {
    const api = documentRef ? `curl -H "Authorization: Bearer $TOKEN" ${baseUrl}${operationPath(contract.getDocument, { documentRef: documentRef.slice(0, 64) })}?format=markdown` : null;
    const body = render('@sign-in', { origin: baseUrl, api });
    return plainPage(401, 'Sign in to see this page', body);
  }

  function notFoundPage(viewer: PageViewer | null, what: string): PlainResponse {
    const body = `<p>${escapeHtml(what)} does not exist here, or is not yours.</p><p><a href="/">Back to the console</a></p>`;
    return viewer ? page(404, 'Not found', body, viewer) : plainPage(404, 'Not found', body);
  }

  function errorPage(viewer: PageViewer, status: number, title: string, message: string, back: string): PlainResponse {
    return page(status, title, `<p role="alert">${escapeHtml(message)}</p><p><a href="${escapeHtml(back)}">Back</a></p>`, viewer);
  }

  // ---- event streams ----

  /**
   * Frames for the followed things' changes until the client goes away: `frameOf(key)` is asked once
   * per changed one (several changes between two frames coalesce); keep-alive comments while idle.
   */
  async function* follow<K>(signal: AbortSignal, followed: readonly Followed<K>[], frameOf: (key: K) => Promise<string | null>, initial: readonly K[]): AsyncGenerator<string> {
    const dirty = new Set<K>(initial);
    let wake: (() => void) | null = null;
    const offs = followed.map(({ key, watch }) =>
      watch(() => {
        dirty.add(key);
        wake?.();
      }),
    );
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      yield 'retry: 3000\n\n';
      while (!signal.aborted) {
        if (dirty.size === 0) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, keepAliveMs);
          });
          wake = null;
          clearTimeout(timer);
          if (signal.aborted) break;
          if (dirty.size === 0) {
            yield ': keep-alive\n\n';
            continue;
          }
        }
        const batch = [...dirty];
        dirty.clear();
        for (const t of batch) {
          const frame = await frameOf(t);
          if (frame !== null && !signal.aborted) yield frame;
        }
      }
    } finally {
      for (const off of offs) off();
      signal.removeEventListener('abort', onAbort);
    }
  }

  function eventStream(stream: AsyncIterable<string>): PlainResponse {
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-accel-buffering': 'no' },
      stream,
    };
  }

  async function documentEvents(request: PlainRequest, session: Session, cookie: string, documentRef: string, query: URLSearchParams): Promise<PlainResponse> {
    const first = await documentView(engine, session.accountId, documentRef); // 404 before the stream starts
    // The stream ends with the client, or with the session (signed out on any process, or expired).
    const ended = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, ended.signal]) : ended.signal;
    const unwatch = sessions.watch(cookie, session, () => ended.abort());
    signal.addEventListener('abort', unwatch, { once: true });
    const from = Number(request.headers['last-event-id'] ?? query.get('after') ?? first.version);
    let last = Number.isInteger(from) && from >= 0 ? from : first.version;
    const actor = accountActor(session.accountId);
    const frameOf = async (): Promise<string | null> => {
      const head = await engine.documents.head(actor, documentRef).catch((e: unknown) => {
        if (isServiceError(e) && e.code === 'NOT_FOUND') return null;
        throw e;
      });
      if (!head || head.version <= last) return null;
      const view = await documentView(engine, session.accountId, documentRef);
      if (view.version <= last) return null;
      last = view.version;
      return `id: ${view.version}\nevent: version\ndata: ${JSON.stringify(view)}\n\n`;
    };
    const followed: Followed<string> = { key: documentRef, watch: (changed) => engine.documents.watch(documentRef, changed) };
    const frames = follow(signal, [followed], frameOf, last < first.version ? [documentRef] : []);
    return eventStream(
      (async function* () {
        try {
          yield* frames;
        } finally {
          unwatch();
        }
      })(),
    );
  }

  async function jobEvents(request: PlainRequest, session: Session): Promise<PlainResponse> {
    const credentials = await engine.credentials.listOfAccount(session.accountId);
    const jobs = (await accountJobs(engine, session.accountId, credentials)).filter((j) => !isTerminal(j.state));
    const followed = jobs.map((j): Followed<string> => ({ key: j.jobId, watch: (changed) => engine.jobs.watch(j.jobId, changed) }));
    const frameOf = async (jobId: string): Promise<string | null> => {
      const j = await engine.jobs.readOfAccount(session.accountId, jobId);
      if (!j) return null;
      return `event: job\ndata: ${JSON.stringify({ jobId: j.jobId, state: j.state, phase: phaseLabel(j.phase), percent: j.progress.percent })}\n\n`;
    };
    return eventStream(follow(request.signal ?? new AbortController().signal, followed, frameOf, []));
  }

  // ---- forms ----

  async function createToken(session: Session, cookie: string, viewer: PageViewer, form: URLSearchParams): Promise<PlainResponse> {
    const values: TokenForm = {
      label: (form.get('label') ?? '').trim(),
      document: (form.get('document') ?? '').trim(),
      requestBudget: (form.get('requestBudget') ?? '').trim(),
      expiresInDays: (form.get('expiresInDays') ?? '').trim(),
      scopes: form.getAll('scope'),
    };
    const integer = (text: string, fallback: number) => (text === '' ? fallback : /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN);
    try {
      const { token } = await engine.credentials.create({
        accountId: session.accountId,
        label: values.label,
        scopes: values.scopes,
        documentRef: values.document === '' ? null : values.document,
        requestBudget: integer(values.requestBudget, 10_000),
        expiresInDays: integer(values.expiresInDays, 90),
      });
      // Post/redirect/get: the token waits for the next GET of this session (once), so reloading the
      // page that shows it neither posts the form again nor lands on a POST-only URL.
      return seeOther(`/settings/api?created=${await sessions.keepNewToken(cookie, token)}`);
    } catch (e) {
      if (!isServiceError(e) || (e.code !== 'INVALID_REQUEST' && e.code !== 'NOT_FOUND')) throw e;
      const errors = e.code === 'NOT_FOUND' ? ['Document: no document of yours has this documentRef'] : fieldMessages(e.fieldErrors, e.message);
      return page(400, 'Agent access', await settingsBody(engine, session.accountId, session.csrf, { errors, form: values }), viewer);
    }
  }

  async function decideReview(session: Session, viewer: PageViewer, reviewRef: string, form: URLSearchParams): Promise<PlainResponse> {
    const decision = form.get('decision');
    const back = `/reviews/${reviewRef}`;
    if (decision !== 'accept' && decision !== 'reject') return errorPage(viewer, 400, 'Not a decision', 'A review is decided with Accept or Reject.', back);
    await proposalOf(engine, session.accountId, reviewRef);
    try {
      await engine.operator.decide(reviewRef, { decision, person: session.accountId, note: null });
    } catch (e) {
      if (isServiceError(e) && e.code === 'CONFLICT') return errorPage(viewer, 409, 'Already decided', e.message, back);
      throw e;
    }
    return seeOther(back);
  }

  async function publish(session: Session, viewer: PageViewer, reviewRef: string, form: URLSearchParams): Promise<PlainResponse> {
    const step = form.get('step');
    const back = `/reviews/${reviewRef}`;
    if (step !== 'confirm-rights' && step !== 'release' && step !== 'promote') return errorPage(viewer, 400, 'Not a publication step', 'The steps are Confirm rights, Release and Promote.', back);
    const p = await proposalOf(engine, session.accountId, reviewRef);
    try {
      await engine.publication.step(p, step, session.accountId);
    } catch (e) {
      if (isServiceError(e) && e.code === 'CONFLICT') return errorPage(viewer, 409, 'Not possible now', e.message, back);
      throw e;
    }
    return seeOther(back);
  }

  // ---- the editor ----

  async function editorAsset(file: string): Promise<PlainResponse> {
    const asset = options.editorAssets ? (await options.editorAssets()).files.get(file) : undefined;
    if (!asset) return { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }, body: 'Not found' };
    const cache = asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
    return { status: 200, headers: { 'content-type': asset.contentType, 'cache-control': cache, 'x-content-type-options': 'nosniff' }, body: asset.body };
  }

  async function authorizeUpgrade(req: { headers: Record<string, string | string[] | undefined> }, _documentRef: string): Promise<PersonGrant | null> {
    const header = req.headers.cookie;
    const cookie = cookieValue(typeof header === 'string' ? header : undefined, SESSION_COOKIE);
    if (cookie === null) return null;
    const origin = req.headers.origin;
    const host = req.headers.host;
    if (typeof origin === 'string' && (typeof host !== 'string' || origin.replace(/^https?:\/\//, '') !== host)) return null;
    const session = await sessions.lookup(cookie);
    return session === null ? null : { actor: accountActor(session.accountId), canWrite: true, watch: (ended) => sessions.watch(cookie, session, ended) };
  }

  // ---- the handler ----

  async function handle(request: PlainRequest, api: Handler, r: Route, path: string, query: URLSearchParams): Promise<PlainResponse> {
    const method = request.method;
    const isPost = POST_ROUTES.has(r.name);
    if (isPost ? method !== 'POST' : method !== 'GET' && method !== 'HEAD') {
      if (r.name === 'document' || r.name === 'review') return api(request);
      // The token form's URL typed or reloaded: the page it belongs to.
      if (r.name === 'create-token' && (method === 'GET' || method === 'HEAD')) return seeOther('/settings/api');
      return plainPage(405, 'Method not allowed', '<p>Method not allowed.</p>', { allow: isPost ? 'POST' : 'GET, HEAD' });
    }
    if (r.name === 'asset') {
      return {
        status: 200,
        headers: { 'content-type': r.file === 'css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
        body: r.file === 'css' ? APP_CSS : APP_JS,
      };
    }
    if (r.name === 'editor-asset') return editorAsset(r.file);
    if (r.name === 'favicon') {
      return { status: 200, headers: { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }, body: FAVICON_ICO };
    }
    if (r.name === 'sign-in-help') return plainPage(200, 'How to sign in', render('@sign-in', { origin: baseUrl, api: null }));
    if (r.name === 'sign-in') {
      // HEAD (a link scanner, a mail client's preview) does not use the link up; only GET signs in.
      if (method === 'HEAD') return plainPage(200, 'Sign in', '<p>Open this link to sign in.</p>');
      const redeemed = await sessions.redeem(r.secret);
      if (!redeemed) {
        return plainPage(401, 'This sign-in link does not work', `<p>The link was used already, has expired (links last 15 minutes) or never existed.</p>${render('@sign-in', { origin: baseUrl, api: null })}`);
      }
      const maxAge = Math.floor((redeemed.session.expiresAt - redeemed.session.createdAt) / 1000);
      return seeOther('/', { 'set-cookie': `${SESSION_COOKIE}=${redeemed.cookie}; ${cookieAttributes}; Max-Age=${maxAge}` });
    }

    const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const session = cookie === null ? null : await sessions.lookup(cookie);
    if (session === null) {
      if (r.name === 'sign-out') return seeOther('/', { 'set-cookie': `${SESSION_COOKIE}=; ${cookieAttributes}; Max-Age=0` });
      if (r.name === 'document' && options.openDocumentPages) return api(request);
      return signedOut(r.name === 'document' || r.name === 'document-events' ? r.documentRef : null);
    }
    const viewer: PageViewer = { account: session.accountId, csrf: session.csrf };
    let form: URLSearchParams | null = null;
    if (isPost) {
      if (request.bodyTooLarge || (request.body !== null && request.body.byteLength > BROWSER_BODY_LIMIT)) return errorPage(viewer, 413, 'Too large', 'The form is too large.', '/');
      form = formOf(request);
      const csrf = form.get('csrf');
      if (csrf === null || !constantTimeEqual(csrf, session.csrf)) {
        return page(403, 'Forbidden', '<p role="alert">This form was not sent from a page of this session (its CSRF token is missing or wrong); nothing was changed. Reload the page and try again.</p>', viewer);
      }
    }

    try {
      switch (r.name) {
        case 'sign-out':
          await sessions.end(cookie!);
          return seeOther('/', { 'set-cookie': `${SESSION_COOKIE}=; ${cookieAttributes}; Max-Age=0` });
        case 'home': {
          const { body } = await homeBody(engine, session.accountId, inspector);
          return page(200, 'Console', body, viewer);
        }
        case 'settings': {
          const newToken = await sessions.takeNewToken(cookie!, query.get('created'));
          return page(200, 'Agent access', await settingsBody(engine, session.accountId, session.csrf, newToken === undefined ? {} : { newToken }), viewer);
        }
        case 'create-token':
          return createToken(session, cookie!, viewer, form!);
        case 'revoke-token':
          await engine.credentials.revoke(session.accountId, r.credentialRef);
          return seeOther('/settings/api');
        case 'document': {
          const view = await documentView(engine, session.accountId, r.documentRef);
          if (!options.editorAssets) return page(200, view.title, documentBody(r.documentRef, view, null), viewer);
          // The editor inserts its placeholder rules through a <style> element carrying this nonce, and
          // colours collaborators' cursors with style attributes (style-src-attr); scripts stay 'self'.
          const nonce = randomSecret();
          const editor = { person: session.accountId, nonce };
          const csp = PAGE_CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'; style-src-attr 'unsafe-inline'`);
          return page(200, view.title, documentBody(r.documentRef, view, editor), viewer, { 'content-security-policy': csp });
        }
        case 'document-events':
          return await documentEvents(request, session, cookie!, r.documentRef, query);
        case 'job-events':
          return await jobEvents(request, session);
        case 'review': {
          const p = await proposalOf(engine, session.accountId, r.reviewRef);
          const job = await jobOf(engine, p);
          return page(200, reviewTitle(p, job?.spec.question), await reviewBody(engine, session.accountId, p, session.csrf), viewer);
        }
        case 'review-decision':
          return await decideReview(session, viewer, r.reviewRef, form!);
        case 'review-publication':
          return await publish(session, viewer, r.reviewRef, form!);
        case 'requests':
          return page(200, 'Requests', await requestsBody(engine, session.accountId, inspector, { token: query.get('token') ?? undefined, status: query.get('status') ?? undefined }), viewer);
      }
    } catch (e) {
      if (isServiceError(e) && e.code === 'NOT_FOUND') return notFoundPage(viewer, r.name.startsWith('review') ? 'This review' : r.name.startsWith('revoke') ? 'This token' : 'This document');
      throw e;
    }
    return notFoundPage(viewer, path);
  }

  return {
    inspector,
    createSignInLink,
    authorizeUpgrade,
    recordRequest(event) {
      inspector.record(event, engine.clock.now());
    },
    mount(api) {
      const mounted: Handler = async (request) => {
        const url = request.url;
        const q = url.indexOf('?');
        const path = q === -1 ? url : url.slice(0, q);
        const r = route(path);
        if (r === null) return api(request);
        const response = await handle(request, api, r, path, new URLSearchParams(q === -1 ? '' : url.slice(q + 1))).catch((e: unknown) => {
          engine.reportError(e, 'browser app');
          return plainPage(500, 'Something went wrong', '<p>The server could not answer this page. The error was logged; try again.</p>');
        });
        if (request.method === 'HEAD') {
          delete response.body;
          if (response.stream) {
            void (response.stream as AsyncGenerator<unknown>).return?.(undefined); // headers only: the stream never starts
            delete response.stream;
          }
        }
        return response;
      };
      mounted.bodyLimit = (method, url) => {
        const q = url.indexOf('?');
        const r = route(q === -1 ? url : url.slice(0, q));
        return r === null ? (api.bodyLimit?.(method, url) ?? 256 * 1024) : BROWSER_BODY_LIMIT;
      };
      mounted.streamsBody = (method, url) => {
        const q = url.indexOf('?');
        return route(q === -1 ? url : url.slice(0, q)) === null && api.streamsBody?.(method, url) === true;
      };
      return mounted;
    },
  };
}
