/**
 * The bench's Go peers (a controller-runtime Memcached operator and k8s.io/sample-controller),
 * built by the integration tier's set-up like the other Go tools, so the bench test runs what was
 * built before it and never builds under its own timeout (a cold first build takes minutes).
 */
import { goTool } from './go-tool';

const CONTROLLER_RUNTIME_PEER = goTool({
  script: 'bench/build-controller-runtime-peer.sh',
  env: 'OPKIT_TEST_CONTROLLER_RUNTIME_PEER',
  what: 'the controller-runtime peer',
});
const SAMPLE_CONTROLLER = goTool({
  script: 'bench/build-sample-controller.sh',
  env: 'OPKIT_TEST_SAMPLE_CONTROLLER',
  what: "Go's sample-controller",
});

/** Builds (or finds cached) both peers and tells the test files through the environment. */
export function provisionBenchPeers(): void {
  CONTROLLER_RUNTIME_PEER.provision();
  SAMPLE_CONTROLLER.provision();
}

/**
 * The bench's environment naming the peers the set-up built. Throws, saying why, where the set-up
 * could not build one or did not run: the bench test never builds a peer itself.
 */
export function benchPeerEnv(): Record<string, string> {
  const dir = (env: string, what: string): string => {
    const built = process.env[env];
    if (!built)
      throw new Error(`${what} was not built by the set-up: ${process.env[`${env}_MISSING`] ?? `${env} unset`}`);
    return built;
  };
  return {
    BENCH_CONTROLLER_RUNTIME_PEER_DIR: dir('OPKIT_TEST_CONTROLLER_RUNTIME_PEER', 'the controller-runtime peer'),
    BENCH_SAMPLE_CONTROLLER_DIR: dir('OPKIT_TEST_SAMPLE_CONTROLLER', "Go's sample-controller"),
  };
}
