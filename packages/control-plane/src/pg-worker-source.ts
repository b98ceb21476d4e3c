// The code of the worker thread that holds the PostgreSQL connection of a `SyncPg` (run with
// `new Worker(source, { eval: true })`, so it needs no separate file in the build and runs the same
// from the TypeScript sources under test). It is plain CommonJS JavaScript: it loads `pg` from the
// path the main thread resolved, answers each request on its port, then wakes the main thread by
// storing the request id in the shared Int32Array and notifying it.

/** The worker's source (CommonJS; `workerData`: `{ pgPath, config, shared, port }`). */
export const PG_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { pgPath, config, shared, port } = workerData;
const flag = new Int32Array(shared);
let pg = null;
let loadError = null;
try {
  pg = require(pgPath);
} catch (e) {
  loadError = 'cannot load the pg client: ' + (e && e.message ? e.message : String(e));
}
// BIGINT (int8) and NUMERIC columns as JS numbers: every integer the store keeps is a safe integer.
const types = {
  getTypeParser(oid, format) {
    if (oid === 20 || oid === 1700) return (v) => (v === null ? null : Number(v));
    return pg.types.getTypeParser(oid, format);
  },
};
let client = null;
// Counts connections: an answer names the connection that ran it, and a request inside a
// transaction names the one it must run on (never a new one: the transaction died with the old).
let connId = 0;

async function connect() {
  const c = new pg.Client(Object.assign({}, config, { types }));
  // A connection that fails later is dropped; the next request opens a new one.
  c.on('error', () => {
    if (client === c) client = null;
  });
  await c.connect();
  connId++;
  client = c;
}

function classify(e) {
  const code = e && typeof e.code === 'string' ? e.code : null;
  const sqlstate = code !== null && /^[0-9A-Z]{5}$/.test(code) ? code : null;
  // No SQLSTATE: the client could not reach the server or lost the connection. Class 08
  // (connection exception) and 57P01-57P03 (server shutting down, crashed, starting) likewise.
  const lost = sqlstate === null || sqlstate.startsWith('08') || sqlstate === '57P01' || sqlstate === '57P02' || sqlstate === '57P03';
  return { sqlstate, lost, errno: code, message: e && e.message ? String(e.message) : String(e) };
}

async function handle(msg) {
  if (loadError !== null) return { ok: false, sqlstate: null, lost: true, errno: 'no_client', message: loadError };
  if (msg.op === 'close') {
    const c = client;
    client = null;
    if (c !== null) await c.end().catch(() => undefined);
    return { ok: true, rows: [], rowCount: 0 };
  }
  if (typeof msg.conn === 'number' && (client === null || connId !== msg.conn)) {
    return { ok: false, sqlstate: null, lost: true, errno: 'conn_lost', message: 'the connection was lost during a transaction (the server rolled it back)' };
  }
  try {
    if (client === null) await connect();
    const r = await client.query(msg.sql, msg.params);
    return { ok: true, conn: connId, rows: r.rows, rowCount: typeof r.rowCount === 'number' ? r.rowCount : 0 };
  } catch (e) {
    const out = classify(e);
    if (out.lost && client !== null) {
      const c = client;
      client = null;
      c.end().catch(() => undefined);
    }
    return Object.assign({ ok: false }, out);
  }
}

port.on('message', (msg) => {
  handle(msg).then((answer) => {
    port.postMessage(Object.assign({ id: msg.id }, answer));
    Atomics.store(flag, 0, msg.id);
    Atomics.notify(flag, 0);
  });
});
`;
