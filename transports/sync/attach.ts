/**
 * `attachSync(server, engine)`: live co-editing on a node:http server's own port. A WebSocket
 * upgrade of `GET {prefix}/documents/{documentRef}/sync` speaks the y-websocket protocol on the
 * document's editor Y.Doc. The rules (the editor doc kept in step with the versions, the version
 * rhythm, token grant checks, the cross-process leases) are the engine's live-editing service
 * (`engine.live`, src/live/); this is the framing, the upgrade and the per-peer limits
 * (docs/co-editing.md).
 * @module
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Actor } from '../../src/actor.ts';
import type { PublicEngine } from '../../src/engine.ts';
import { Patterns } from '../../src/ids.ts';
import { ServiceError, isServiceError, type ApiError } from '../../src/errors.ts';
import { statusOf } from '../../src/api/status.ts';
import { metaJson } from '../../src/api/envelope.ts';
import type { SyncTiming } from '../../src/live/bridge.ts';
import { STALE_DOCUMENT_CLOSE } from '../../src/blocks/editor-protocol.ts';
import { Room, RoomTooLargeError, StaleDocumentError, type Peer } from './room.ts';
import { bearerToken, namesBearerScheme } from '../../src/contract/bearer.ts';
import { SyncRelay, defaultRelayTiming, type RelayTiming } from './relay.ts';
import { GRANT_ENDED_CLOSE, PEER_LIMITS, type PeerLimits } from './limits.ts';
import { PeerGuard } from './peer-guard.ts';

/** Who may join a room, as an {@link SyncOptions.authorizeUpgrade} hook decides. */
export interface SyncGrant {
  actor: Actor;
  /** False: a read-only connection (its edits are dropped). */
  canWrite: boolean;
  /**
   * Follow the grant while the connection is open: call `ended` when it ends (the credential
   * revoked or expired, the person signed out), on whichever process; returns stop following. The
   * connection is then closed with {@link GRANT_ENDED_CLOSE}.
   */
  watch?: (ended: (reason: string) => void) => () => void;
}

/** Options of {@link attachSync}. */
export interface SyncOptions {
  /** Mount prefix(es) of the path, e.g. `/api/v1` (no trailing slash); default '' (the root). */
  prefix?: string | readonly string[];
  /**
   * The signed-in person of a browser request (its cookie session): a grant, or null to fall back
   * to the request's bearer token. May throw a ServiceError (its status answers the upgrade).
   */
  authorizeUpgrade?: (req: IncomingMessage, documentRef: string) => SyncGrant | null | Promise<SyncGrant | null>;
  /** Peers per room; the next is refused with 503 TEMPORARILY_UNAVAILABLE. Default 100. */
  maxPeersPerRoom?: number;
  /**
   * Open connections of one credential (or one signed-in person) across all rooms; the next is
   * refused with 429 RATE_LIMITED and Retry-After before the upgrade. Default 32.
   */
  maxConnectionsPerHolder?: number;
  /** Largest WebSocket message accepted (bytes); a larger one closes the connection (1009). Default 4 MiB. */
  maxMessageBytes?: number;
  /**
   * The largest a room's live copy of a document may grow (its Y.Doc state, bytes), measured after
   * every `maxMessageBytes` of peers' updates: past it the room closes every peer (4409) and opens
   * again from the last version. Default 16 MiB (eight times the API's 2 MB document limit).
   */
  maxDocumentBytes?: number;
  /** What one connection may cost (buffered output, rates, awareness): ./limits.ts, default {@link PEER_LIMITS}. */
  peerLimits?: Partial<PeerLimits>;
  /** The version rhythm (1 s pause, 5 s at most) and its timers. */
  timing?: Partial<SyncTiming>;
  /** Failed background work (a commit or a read of a room); default: the engine's error reporter. */
  onError?: (error: unknown, documentRef: string) => void;
  /**
   * Live editing across processes sharing the storage (./relay.ts): one process hosts a document's
   * room, the others forward their editors to it. Default: on when the storage is shared by
   * processes and carries ephemeral messages (PostgreSQL); `false` keeps one room per process.
   */
  relay?: boolean | Partial<RelayTiming>;
}

/** The attached sync endpoint. */
export interface SyncServer {
  /** Open rooms by documentRef (one per document with at least one peer). */
  readonly rooms: ReadonlyMap<string, Room>;
  /** Commit pending edits of every room and wait for them (rooms stay open). */
  flush(): Promise<void>;
  /** Close every connection, commit pending edits, free the rooms, detach from the server. */
  close(): Promise<void>;
}

/** A documentRef's pattern, captured, for the upgrade path's expression. */
const DOCUMENT_REF = `(${Patterns.documentRef.source.replace(/^\^|\$$/g, '')})`;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** An HTTP error answer on the raw socket, with the contract's error envelope; no upgrade. */
function refuse(socket: Duplex, engine: PublicEngine, error: ServiceError, extra: Record<string, string> = {}): void {
  const status = statusOf(error.code);
  const apiError: ApiError = { code: error.code, message: error.message, retryable: error.retryable };
  if (status === 429 || status === 503) {
    // The contract: 429 and 503 answers carry Retry-After and error.retryAfterMs.
    const ms = error.retryAfterMs ?? 5000;
    apiError.retryAfterMs = ms;
    extra = { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))), ...extra };
  }
  if (error.requiredAction) apiError.requiredAction = error.requiredAction;
  if (error.fieldErrors?.length) apiError.fieldErrors = error.fieldErrors;
  const requestId = engine.live.requestId();
  const body = `{"error":${JSON.stringify(apiError)},"meta":${metaJson(requestId, undefined)}}`;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
    Connection: 'close',
    ...extra,
  };
  const head = [`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
}

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable', 500: 'Internal Server Error' };

const notFound = () => new ServiceError('NOT_FOUND', 'No document at this address is visible to this credential.');

/**
 * Serve live co-editing on `server`'s `upgrade` event (`ws` with `noServer`): one room per open
 * document, freed (after committing pending edits) when its last peer leaves.
 * @remarks Who may connect: the person `authorizeUpgrade` admits; else a bearer token
 * (`Authorization: Bearer …` on the upgrade request) with document:write (edits) or document:read
 * alone (read-only, its edits dropped). No credential: 401; a token without document:read, or a
 * document outside its boundary: 404; a full room: 503 — each an HTTP answer with the error
 * envelope, never a WebSocket. Upgrades of other paths are left to other listeners (or answered
 * 404 when there are none).
 * @example
 * const listening = await listen(createApiHandler(engine));
 * const sync = attachSync(listening.server, engine);
 * // a y-websocket client: new WebsocketProvider(`ws://…/documents/${ref}`, 'sync', doc, { … })
 */
export function attachSync(server: Server, engine: PublicEngine, options: SyncOptions = {}): SyncServer {
  const prefixes = typeof options.prefix === 'string' ? [options.prefix] : (options.prefix ?? ['']);
  const mounts = `(?:${prefixes.map(escapeRegExp).join('|')})`;
  const path = new RegExp(`^${mounts}/documents/${DOCUMENT_REF}/sync/?(?:\\?.*)?$`);
  const syncLike = new RegExp(`^${mounts}/documents/[^/?]*/sync/?(?:\\?.*)?$`);
  const maxPeers = options.maxPeersPerRoom ?? 100;
  const maxPerHolder = options.maxConnectionsPerHolder ?? 32;
  /** Open (or opening) connections by holder: a credential, or a signed-in person's account. */
  const held = new Map<string, number>();
  const holderOf = (grant: SyncGrant) => grant.actor.credentialRef ?? `person:${grant.actor.accountId}`;
  const letGo = (holder: string) => {
    const n = (held.get(holder) ?? 1) - 1;
    if (n <= 0) held.delete(holder);
    else held.set(holder, n);
  };
  const report = options.onError ?? ((error: unknown, ref: string) => engine.reportError(error, `sync ${ref}`));
  const maxMessageBytes = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const maxDocumentBytes = options.maxDocumentBytes ?? 16 * 1024 * 1024;
  const peerLimits: PeerLimits = { ...PEER_LIMITS, ...options.peerLimits };
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  const rooms = new Map<string, Room>();
  /** Rooms being opened (their first version read), by documentRef. */
  const opening = new Map<string, Promise<Room>>();
  /** Rooms being closed (their pending edits committed). */
  const closing = new Set<Promise<void>>();
  const sockets = new Set<WebSocket>();
  // [relay] Across processes: the room's owner hosts it, the others forward (./relay.ts).
  const port = engine.live.relay;
  const relayOn = port !== null && (options.relay === undefined ? port.sharedByProcesses : options.relay !== false);
  const relay = relayOn
    ? new SyncRelay(
        port,
        {
          openRoom: (ref, accountId) => roomFor(ref, accountId),
          hasRoom: (ref) => rooms.has(ref) || opening.has(ref),
          release: (ref, room) => release(ref, room),
          reset: (ref, room, error) => reset(ref, room, error),
          report: (error, ref) => report(error, ref),
        },
        { ...defaultRelayTiming, ...(typeof options.relay === 'object' ? options.relay : {}) },
      )
    : null;

  async function grantOf(req: IncomingMessage, documentRef: string): Promise<SyncGrant> {
    if (options.authorizeUpgrade && req.headers.cookie !== undefined && req.headers.cookie.trim() !== '' && namesBearerScheme(req.headers.authorization)) {
      // As over REST: which of the two speaks for the request cannot be told.
      throw new ServiceError('AUTH_AMBIGUOUS', 'The request carries both a bearer token and a browser session cookie; send the bearer token alone.', {
        requiredAction: 'authenticate',
      });
    }
    const hooked = options.authorizeUpgrade ? await options.authorizeUpgrade(req, documentRef) : null;
    let grant = hooked;
    if (grant === null) {
      const token = bearerToken(req.headers.authorization);
      if (token === null) {
        throw new ServiceError('AUTH_REQUIRED', 'Live co-editing needs a signed-in person or a bearer token: Authorization: Bearer <token>.', {
          requiredAction: 'authenticate',
        });
      }
      const credential = await engine.credentials.authenticate(token);
      if (!credential.scopeSet.has('document:read')) throw notFound();
      // The upgrade is a request of the token's budget, like any (RATE_LIMITED when it is spent).
      if (engine.credentials.sharedBudgets) await engine.credentials.take(credential);
      else engine.credentials.charge(credential);
      grant = {
        actor: credential.actor,
        canWrite: credential.scopeSet.has('document:write'),
        watch: (ended) => engine.live.watchCredential(credential, ended),
      };
    }
    await engine.documents.head(grant.actor, documentRef); // NOT_FOUND outside the boundary
    return grant;
  }

  function roomFor(documentRef: string, accountId: string): Promise<Room> {
    const open = rooms.get(documentRef);
    if (open) return Promise.resolve(open);
    let pending = opening.get(documentRef);
    if (!pending) {
      // The session checks a token's grant before each commit of its edits (engine.live.open).
      pending = engine.live.open(documentRef, accountId, { timing: options.timing, onError: (e) => report(e, documentRef) }).then(
        (session) => {
          const room = new Room(session, maxDocumentBytes, maxMessageBytes, peerLimits);
          session.whenBroken((error) => reset(documentRef, room, error));
          rooms.set(documentRef, room);
          opening.delete(documentRef);
          return room;
        },
        (error: unknown) => {
          opening.delete(documentRef);
          throw error;
        },
      );
      opening.set(documentRef, pending);
    }
    return pending;
  }

  /**
   * The room's copy can no longer be kept (grown past its bound, nested past what the editor
   * holds): every peer is closed with 4409 and starts over; the room is freed as they leave (what
   * can be committed is, first) and opens again from the last version.
   */
  function reset(documentRef: string, room: Room, error: Error): void {
    report(error, documentRef);
    for (const p of [...room.peers]) p.socket.close(STALE_DOCUMENT_CLOSE, 'the live copy had to be reset: open the document again');
  }

  function release(documentRef: string, room: Room): void {
    if (rooms.get(documentRef) !== room) return;
    rooms.delete(documentRef);
    const done = room.bridge
      .flush()
      .catch((e) => report(e, documentRef))
      .finally(() => {
        room.destroy();
        room.bridge.close();
        closing.delete(done);
        relay?.released(documentRef); // [relay] its lease goes
      });
    closing.add(done);
  }

  function connect(socket: WebSocket, room: Room, documentRef: string, grant: SyncGrant): void {
    sockets.add(socket);
    const holder = holderOf(grant);
    const guard = new PeerGuard(socket, peerLimits);
    // Revoked, expired, signed out (on any process): the connection ends, and what it sends after is dropped.
    let unwatch: (() => void) | undefined;
    const peer: Peer = { socket, actor: grant.actor, canWrite: grant.canWrite, clients: new Set(), guard };
    socket.binaryType = 'nodebuffer';
    let refused = false; // closing: nothing more it sends is applied
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (refused) return;
      if (!guard.received(data.byteLength)) {
        refused = true; // past its rate by a whole burst: the guard closes it
        return;
      }
      try {
        if (!isBinary) throw new Error('text frames are not part of the protocol');
        room.receive(peer, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      } catch (error) {
        refused = true;
        if (error instanceof RoomTooLargeError) reset(documentRef, room, error);
        else if (error instanceof StaleDocumentError) socket.close(STALE_DOCUMENT_CLOSE, 'stale document: connect again with an empty Y.Doc');
        else socket.close(1003, 'malformed message');
      }
    });
    const gone = () => {
      guard.dispose();
      unwatch?.();
      sockets.delete(socket);
      letGo(holder);
      if (room.leave(peer)) release(documentRef, room);
    };
    socket.on('close', gone);
    socket.on('error', () => socket.terminate());
    room.join(peer);
    unwatch = grant.watch?.((reason) => {
      refused = true;
      guard.dispose();
      socket.close(GRANT_ENDED_CLOSE, reason.slice(0, 120));
    });
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = req.url ?? '';
    const m = path.exec(url);
    if (m === null) {
      if (syncLike.test(url)) return refuse(socket, engine, notFound());
      if (server.listenerCount('upgrade') === 1) refuse(socket, engine, new ServiceError('NOT_FOUND', 'Nothing upgrades at this address.'));
      return;
    }
    const documentRef = m[1]!;
    socket.on('error', () => socket.destroy());
    try {
      const grant = await grantOf(req, documentRef);
      // [relay] Another process hosts the room: this peer is forwarded there.
      const owner = relay !== null && !rooms.has(documentRef) && !opening.has(documentRef) ? await relay.ownerOf(documentRef) : null;
      const room = owner === null ? await roomFor(documentRef, grant.actor.accountId) : null;
      if (room !== null && room.peers.size >= maxPeers) {
        throw new ServiceError('TEMPORARILY_UNAVAILABLE', `This document has ${maxPeers} editors connected, the most a room takes; try again later.`, {
          retryable: true,
        });
      }
      const holder = holderOf(grant);
      if ((held.get(holder) ?? 0) >= maxPerHolder) {
        throw new ServiceError('RATE_LIMITED', `This credential already has ${maxPerHolder} live co-editing connections open, the most one holder may; close one or try again later.`, {
          retryable: true,
          retryAfterMs: 5000,
        });
      }
      if (socket.destroyed) return;
      held.set(holder, (held.get(holder) ?? 0) + 1); // counted from here; connect's close (or a failed open) lets go
      let upgraded = false;
      socket.once('close', () => {
        if (!upgraded) letGo(holder); // a handshake ws refused never reaches the callback
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        upgraded = true;
        if (owner !== null && relay !== null) {
          sockets.add(ws);
          ws.binaryType = 'nodebuffer';
          // The same bounds as a local peer (./limits.ts): its unread output and its rate are this
          // process's to bound; the owner's room applies the step-2 and awareness rules.
          const guard = new PeerGuard(ws, peerLimits);
          const bounded = { get readyState() { return ws.readyState; }, send: (data: Uint8Array) => guard.send(data), close: (code: number, reason: string) => ws.close(code, reason) };
          const link = relay.forward(bounded, documentRef, grant.actor, grant.canWrite, owner);
          let refused = false;
          ws.on('message', (data: Buffer, isBinary: boolean) => {
            if (refused) return;
            if (!guard.received(data.byteLength)) {
              refused = true;
              return;
            }
            link.message(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), isBinary);
          });
          // Revoked, expired, signed out (on any process): the forwarded connection ends too.
          const unwatch = grant.watch?.((reason) => {
            refused = true;
            guard.dispose();
            ws.close(GRANT_ENDED_CLOSE, reason.slice(0, 120));
          });
          ws.on('close', () => {
            guard.dispose();
            unwatch?.();
            link.closed();
            sockets.delete(ws);
            letGo(holder);
          });
          ws.on('error', () => ws.terminate());
          return;
        }
        // The room may have been freed while the handshake ran: take the current one.
        const current = rooms.get(documentRef);
        if (current === undefined) {
          void roomFor(documentRef, grant.actor.accountId).then(
            (r) => connect(ws, r, documentRef, grant),
            () => {
              letGo(holder);
              ws.close(1011, 'the document could not be opened');
            },
          );
          return;
        }
        connect(ws, current, documentRef, grant);
      });
    } catch (error) {
      if (isServiceError(error)) {
        const extra: Record<string, string> = error.code === 'AUTH_REQUIRED' ? { 'WWW-Authenticate': 'Bearer' } : {};
        if (error.code === 'FORBIDDEN') return refuse(socket, engine, notFound());
        return refuse(socket, engine, error, extra);
      }
      report(error, documentRef);
      refuse(socket, engine, new ServiceError('INTERNAL_ERROR', 'The document could not be opened for live co-editing.'));
    }
  }

  const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void upgrade(req, socket, head);
  server.on('upgrade', listener);

  return {
    rooms,
    async flush() {
      await Promise.all([...rooms.values()].map((r) => r.bridge.flush()));
    },
    async close() {
      server.off('upgrade', listener);
      relay?.closeRemotes();
      for (const s of sockets) s.terminate();
      await Promise.allSettled([...opening.values()]);
      for (const [ref, room] of [...rooms]) release(ref, room);
      await Promise.all([...closing]);
      await relay?.close();
      wss.close();
    },
  };
}
