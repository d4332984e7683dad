/**
 * `npm run cluster`: starts the test control plane and keeps it running until Ctrl-C, for demos
 * (`npm run operator` against it) and for poking at it with kubectl.
 */
import { startControlPlane } from './control-plane';

async function main(): Promise<void> {
  const cp = await startControlPlane({ audit: process.argv.includes('--audit') });
  process.stdout.write(`Kubernetes ${cp.version} at ${cp.server}\nexport KUBECONFIG=${cp.kubeconfig}\n`);
  process.stdout.write(
    cp.nodes
      ? 'Simulated nodes (kwok): scheduled pods become Running and Ready, Jobs complete, claims bind.\n'
      : 'No nodes: pods stay Pending (kube-scheduler or kwok missing).\n',
  );
  if (cp.etcdUrl) process.stdout.write(`etcd at ${cp.etcdUrl}\n`);
  const stop = async () => {
    await cp.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
