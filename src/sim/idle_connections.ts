/**
 * How long the twin's HTTP/1.1 servers keep an idle keep-alive connection open.
 *
 * Node closes an idle connection after 5 s by default. A client that pools connections (Deno's
 * fetch, client-node's agent) may pick that connection for its next request at the moment the
 * server closes it; the request then fails with "connection closed before message completed"
 * although the server never saw it. Under load that race is real: a twin read that failed this
 * way left a demo step unresolved (its identity read was unreadable). The server must therefore
 * keep idle connections longer than any client keeps them in its pool (Deno's pool: 90 s), so
 * the client, not the server, is the side that closes them.
 */
export const IDLE_CONNECTION_MS = 120_000;

/** The part of node:http's and node:https's Server this sets. */
interface KeepAliveServer {
  keepAliveTimeout: number;
  headersTimeout: number;
}

/** Applies the idle bound to a server (headers must be allowed a little longer, as Node asks). */
export function keepIdleConnections<S extends KeepAliveServer>(server: S): S {
  server.keepAliveTimeout = IDLE_CONNECTION_MS;
  server.headersTimeout = IDLE_CONNECTION_MS + 5_000;
  return server;
}
