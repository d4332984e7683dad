/**
 * A second run after a killed first one starts clean: the tier's set-up started a real node in a
 * process of its own, ran a pod on it and killed the process outright (test/harness/killed-run.ts);
 * starting the tier's own node then took back everything the dead run had left.
 */
import * as fs from 'node:fs';
import { alive } from '../../testing/node/leftovers';
import type { KilledRun } from '../harness/killed-run';
import { getJson } from '../support/kube';

const skip = process.env.OPKIT_E2E_SKIP;

if (skip) test.todo(`a start after a killed run — skipped: ${skip}`);

(skip ? describe.skip : describe)('a real node started after a killed run', () => {
  const killed = JSON.parse(process.env.OPKIT_E2E_KILLED_RUN ?? '{}') as KilledRun;

  test('none of its processes is left: its API server, etcd, containerd, kubelet, kube-proxy, shims and pod', () => {
    // Its plane, node and pod: at least etcd, the API server, containerd, the kubelet, kube-proxy and the pod's.
    expect(killed.pids.length).toBeGreaterThanOrEqual(6);
    expect(killed.pids.filter(alive)).toEqual([]);
  });

  test('its work directory is gone, mounts and all', () => {
    expect(fs.existsSync(killed.workDir)).toBe(false);
    const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(killed.workDir);
  });

  test('and the node started after it is Ready, its pod gone with the old cluster', () => {
    const node = getJson(['get', 'node', 'opkit-node']);
    expect(node.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(getJson(['get', 'pods', '-n', 'default']).items.map((p: any) => p.metadata.name)).not.toContain(
      'left-behind',
    );
  });
});
