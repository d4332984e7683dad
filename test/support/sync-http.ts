/**
 * A synchronous HTTPS request, for test helpers whose callers expect an answer without `await` (as
 * they got one from `kubectl` run with spawnSync): the request runs on a worker thread while this
 * thread waits on a shared flag, then takes the answer off a message port. It costs a round trip
 * on a kept-alive connection instead of a process start.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

export interface SyncRequest {
  readonly url: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  readonly accept?: string;
  readonly timeoutMs?: number;
  /** @default 'GET' */
  readonly method?: string;
  /** A JSON body (sent as application/json). */
  readonly body?: string;
}

export interface SyncResponse {
  /** The HTTP status; 0 when no answer came (the error says why). */
  readonly status: number;
  readonly body: string;
  readonly error?: string;
}

// Plain JavaScript, evaluated in the worker: it must not need the test's TypeScript transform.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const https = require('node:https');
const agents = new Map();
function agentFor(r) {
  const key = [new URL(r.url).host, r.ca, r.cert, r.key].join('|');
  if (!agents.has(key)) agents.set(key, new https.Agent({ keepAlive: true, ca: r.ca, cert: r.cert, key: r.key }));
  return agents.get(key);
}
parentPort.on('message', ({ request, port, flag }) => {
  let done = false;
  const answer = (response) => {
    if (done) return;
    done = true;
    port.postMessage(response);
    port.close();
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  };
  const headers = { accept: request.accept || 'application/json' };
  if (request.token) headers.authorization = 'Bearer ' + request.token;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  const options = { method: request.method || 'GET', agent: agentFor(request), headers, timeout: request.timeoutMs };
  const req = https.request(request.url, options, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => answer({ status: res.statusCode || 0, body: Buffer.concat(chunks).toString('utf8') }));
    res.on('error', (err) => answer({ status: 0, body: '', error: String(err) }));
  });
  req.on('timeout', () => req.destroy(new Error('timed out after ' + request.timeoutMs + ' ms')));
  req.on('error', (err) => answer({ status: 0, body: '', error: String(err) }));
  req.end(request.body);
});
`;

let worker: Worker | undefined;

function theWorker(): Worker {
  if (!worker) {
    worker = new Worker(WORKER_SOURCE, { eval: true });
    // Idle, it must not keep the test process alive.
    worker.unref();
  }
  return worker;
}

/** Sends `request` and returns the answer, blocking this thread until it comes. */
export function requestSync(request: SyncRequest): SyncResponse {
  const timeoutMs = request.timeoutMs ?? 60_000;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  theWorker().postMessage({ request: { ...request, timeoutMs }, port: port2, flag }, [port2]);
  // The worker's own timeout answers first; this one only guards against a worker that died.
  const waited = Atomics.wait(flag, 0, 0, timeoutMs + 5_000);
  const message: { message: SyncResponse } | undefined = receiveMessageOnPort(port1);
  port1.close();
  if (!message) return { status: 0, body: '', error: `no answer from the request thread (${waited})` };
  return message.message;
}

/**
 * Sends `request` on the same worker and kept connections as requestSync, and resolves with the
 * answer without blocking this thread.
 */
export function requestAsync(request: SyncRequest): Promise<SyncResponse> {
  const timeoutMs = request.timeoutMs ?? 60_000;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  return new Promise((resolve) => {
    port1.once('message', (answer: SyncResponse) => {
      port1.close();
      resolve(answer);
    });
    theWorker().postMessage({ request: { ...request, timeoutMs }, port: port2, flag }, [port2]);
  });
}

/** GETs `request.url` (requestSync). */
export function getSync(request: Omit<SyncRequest, 'method' | 'body'>): SyncResponse {
  return requestSync(request);
}
