/**
 * The real node's registry (testing/node/registry.ts) serves what the node's containerd holds and
 * nothing else, read through `ctr` — here a stand-in `ctr` with one image and its content.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { type NodeRegistry, registryLog, startNodeRegistry } from '../../../testing/node/registry';

const MANIFEST = '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[]}';
const DIGEST = `sha256:${'a'.repeat(64)}`;
const LAYER = `sha256:${'b'.repeat(64)}`;

function get(
  address: string,
  urlPath: string,
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`http://${address}${urlPath}`, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe("the real node's registry", () => {
  let dir: string;
  let registry: NodeRegistry;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-registry-'));
    // `ctr … images ls name==<ref>` lists the one image; `ctr … content get <digest>` prints its content.
    fs.writeFileSync(
      path.join(dir, 'ctr'),
      `#!/usr/bin/env bash
args="$*"
case "$args" in
  *"images ls name==docker.io/library/busybox:latest"*)
    echo "REF TYPE DIGEST SIZE PLATFORMS LABELS"
    echo "docker.io/library/busybox:latest application/vnd.oci.image.manifest.v1+json ${DIGEST} 1.9 MiB linux/amd64 -" ;;
  *"images ls"*) echo "REF TYPE DIGEST SIZE PLATFORMS LABELS" ;;
  *"content get ${DIGEST}"*) printf '%s' '${MANIFEST}' ;;
  *"content get ${LAYER}"*) printf 'layer bytes' ;;
  *) echo "not found" >&2; exit 1 ;;
esac
`,
      { mode: 0o755 },
    );
    registry = await startNodeRegistry({
      ctr: path.join(dir, 'ctr'),
      containerdSocket: path.join(dir, 'containerd.sock'),
      log: registryLog(dir),
    });
  });

  afterAll(async () => {
    await registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers the API version check, on loopback', async () => {
    expect(registry.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const r = await get(registry.address, '/v2/');
    expect([r.status, r.headers['docker-distribution-api-version']]).toEqual([200, 'registry/2.0']);
  });

  test('serves an image the node holds by its name (the host it stands in for in ?ns=), with its digest and media type', async () => {
    const r = await get(registry.address, '/v2/library/busybox/manifests/latest?ns=docker.io');
    expect(r.status).toBe(200);
    expect(r.headers['docker-content-digest']).toBe(DIGEST);
    expect(r.headers['content-type']).toBe('application/vnd.oci.image.manifest.v1+json');
    expect(r.body).toBe(MANIFEST);
    const head = await get(registry.address, '/v2/library/busybox/manifests/latest?ns=docker.io', 'HEAD');
    expect([head.status, head.headers['content-length'], head.body]).toEqual([200, String(MANIFEST.length), '']);
    // By digest, and a blob by digest.
    const byDigest = await get(registry.address, `/v2/library/busybox/manifests/${DIGEST}?ns=docker.io`);
    expect([byDigest.status, byDigest.headers['content-type']]).toEqual([
      200,
      'application/vnd.oci.image.manifest.v1+json',
    ]);
    const blob = await get(registry.address, `/v2/library/busybox/blobs/${LAYER}?ns=docker.io`);
    expect([blob.status, blob.body]).toEqual([200, 'layer bytes']);
  });

  test('answers not found for anything the node does not hold, under any registry name, and refuses writes', async () => {
    const missing = await get(registry.address, '/v2/not-loaded/manifests/1?ns=registry.example.com');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({
      errors: [{ code: 'MANIFEST_UNKNOWN', message: 'registry.example.com/not-loaded:1 is not on the node' }],
    });
    expect((await get(registry.address, `/v2/x/blobs/sha256:${'c'.repeat(64)}`)).status).toBe(404);
    expect((await get(registry.address, '/v2/x/blobs/uploads/', 'POST')).status).toBe(405);
  });

  // The e2e tier's tests run in the process that started the node, and block it for minutes in
  // synchronous calls (kubectl, `helm upgrade --wait`): a registry in that process answered no
  // pull meanwhile, and containerd gave up after a minute (DeadlineExceeded, seen in CI).
  test('answers while the process that started it is blocked in a synchronous call', () => {
    const url = `http://${registry.address}/v2/not-loaded/manifests/1?ns=docker.io`;
    const ask = `require('node:http').get('${url}', (res) => { console.log(res.statusCode); res.resume(); })`;
    // The timeout only ends a deadlock: the answer comes at once or never.
    const status = execFileSync(process.execPath, ['-e', ask], { encoding: 'utf8', timeout: 60_000 });
    expect(status.trim()).toBe('404');
  });

  test('logs every request with the registry host it was for', () => {
    const lines = fs
      .readFileSync(registryLog(dir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual({
      method: 'GET',
      path: '/v2/not-loaded/manifests/1',
      ns: 'registry.example.com',
      status: 404,
    });
  });
});
