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
  // Listeners stay on while stopping: under npm a Ctrl-C arrives twice (the terminal's and npm's
  // forward), and a second signal with no listener would end this process before the control
  // plane's processes and directory are gone.
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await cp.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
