/**
 * The real node's registry: every image the node holds, and nothing else, served on loopback with
 * the read side of the OCI distribution API. A pod whose image is pulled every time (`:latest`, or
 * `imagePullPolicy: Always`, as the seed's CronTab names `busybox`) then starts as it would on a
 * cluster with a registry; an image the node does not hold is answered "not found" here, at once,
 * and no registry off this machine is ever asked (containerd sends every registry host here).
 *
 * It reads the node's containerd (`ctr`): an image's manifest by its name, any content by digest.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

/** What the registry reads the node's content with: `ctr` and the containerd socket; where it logs each request. */
export interface NodeContent {
  readonly ctr: string;
  readonly containerdSocket: string;
  /** A JSON line per request: method, path, the registry host asked for (`ns`), status. */
  readonly log: string;
}

/** The registry's request log in a real node's work directory. */
export function registryLog(nodeWorkDir: string): string {
  return path.join(nodeWorkDir, 'registry.log');
}

/** A registry serving the node's images; `address` is `127.0.0.1:<port>`. */
export interface NodeRegistry {
  readonly address: string;
  close(): Promise<void>;
}

const MANIFEST = /^\/v2\/(.+)\/manifests\/([^/]+)$/;
const BLOB = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/;

/**
 * Starts the registry in a process of its own: the process that starts a node (the e2e tier's
 * tests, run in band) blocks for minutes in synchronous calls (kubectl, `helm upgrade --wait`),
 * and a registry sharing its event loop would answer no pull meanwhile. The registry's process
 * ends with its parent (its stdin closes) or on `close`.
 */
export async function startNodeRegistry(node: NodeContent): Promise<NodeRegistry> {
  // From the compiled package the module is JavaScript; from this repository's sources, TypeScript.
  const entry = __filename.endsWith('.ts') ? ['--import', 'tsx', __filename] : [__filename];
  const child = spawn(process.execPath, [...entry, SERVE_FLAG], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, [NODE_CONTENT_ENV]: JSON.stringify(node) },
  });
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const [line, rest] = out.split('\n', 2);
      if (rest !== undefined && line) resolve(line.trim());
    });
    child.once('exit', (code) => {
      reject(new Error(`the node's registry exited (${String(code)}) before it listened`));
    });
  });
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

const SERVE_FLAG = '--serve-node-registry';
const NODE_CONTENT_ENV = 'OPKIT_NODE_REGISTRY_CONTENT';

/** The registry's process: serves until its parent goes (stdin closes) or it is told to stop; prints its address. */
async function serveRegistry(node: NodeContent): Promise<void> {
  const server = http.createServer((req, res) => {
    serve(node, req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop).resume();
  process.stdout.write(`127.0.0.1:${String(port)}\n`);
}

/** An answer to write: status, headers and body. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | number>;
  readonly body: Buffer | string;
}

async function serve(node: NodeContent, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const head = req.method === 'HEAD';
  const url = new URL(req.url ?? '/', 'http://registry');
  const reply =
    req.method === 'GET' || head ? await route(node, url) : failure(405, 'UNSUPPORTED', 'this registry only reads');
  res.writeHead(reply.status, reply.headers);
  res.end(head ? undefined : reply.body);
  const line = { method: req.method, path: url.pathname, ns: url.searchParams.get('ns'), status: reply.status };
  fs.appendFileSync(node.log, `${JSON.stringify(line)}\n`);
}

async function route(node: NodeContent, url: URL): Promise<Answer> {
  if (url.pathname === '/v2/' || url.pathname === '/v2')
    return {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Docker-Distribution-API-Version': 'registry/2.0' },
      body: '{}',
    };
  const manifest = MANIFEST.exec(url.pathname);
  // containerd names the registry host it stands in for: ?ns=docker.io.
  if (manifest)
    return manifestOf(node, url.searchParams.get('ns') ?? 'docker.io', manifest[1] ?? '', manifest[2] ?? '');
  const blob = BLOB.exec(url.pathname);
  if (blob) return blobOf(node, blob[2] ?? '');
  return failure(404, 'NAME_UNKNOWN', `${url.pathname} is not served here`);
}

async function manifestOf(node: NodeContent, host: string, repository: string, reference: string): Promise<Answer> {
  const target = reference.startsWith('sha256:')
    ? { digest: reference, mediaType: undefined }
    : await imageTarget(node, `${host}/${repository}:${reference}`);
  const content = target ? await contentOf(node, target.digest) : undefined;
  if (!target || !content)
    return failure(404, 'MANIFEST_UNKNOWN', `${host}/${repository}:${reference} is not on the node`);
  return found(content, target.digest, target.mediaType ?? mediaTypeOf(content));
}

async function blobOf(node: NodeContent, digest: string): Promise<Answer> {
  const content = await contentOf(node, digest);
  return content
    ? found(content, digest, 'application/octet-stream')
    : failure(404, 'BLOB_UNKNOWN', `${digest} is not on the node`);
}

function found(content: Buffer, digest: string, mediaType: string): Answer {
  return {
    status: 200,
    headers: { 'Content-Type': mediaType, 'Content-Length': content.length, 'Docker-Content-Digest': digest },
    body: content,
  };
}

function failure(status: number, code: string, message: string): Answer {
  return {
    status,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ errors: [{ code, message }] }),
  };
}

function ctr(node: NodeContent, args: readonly string[]): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    execFile(
      node.ctr,
      ['--address', node.containerdSocket, '-n', 'k8s.io', ...args],
      { encoding: 'buffer', maxBuffer: 1024 * 1024 * 1024 },
      (err, stdout) => {
        resolve(err ? undefined : stdout);
      },
    );
  });
}

/** The digest and media type an image name points at on the node (`ctr images ls`: REF TYPE DIGEST …). */
async function imageTarget(
  node: NodeContent,
  name: string,
): Promise<{ digest: string; mediaType: string } | undefined> {
  const listed = await ctr(node, ['images', 'ls', `name==${name}`]);
  const line = listed
    ?.toString('utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  const [, mediaType, digest] = line?.split(/\s+/) ?? [];
  return mediaType && digest ? { digest, mediaType } : undefined;
}

function contentOf(node: NodeContent, digest: string): Promise<Buffer | undefined> {
  return ctr(node, ['content', 'get', digest]);
}

/** A manifest's own media type, for one asked for by digest. */
function mediaTypeOf(content: Buffer): string {
  try {
    const parsed = JSON.parse(content.toString('utf8')) as { mediaType?: unknown };
    if (typeof parsed.mediaType === 'string') return parsed.mediaType;
  } catch {
    // Not JSON: served as what the client asked for.
  }
  return 'application/vnd.oci.image.manifest.v1+json';
}

if (require.main === module && process.argv[2] === SERVE_FLAG) {
  void serveRegistry(JSON.parse(process.env[NODE_CONTENT_ENV] ?? '{}') as NodeContent);
}
