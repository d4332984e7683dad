import { EtcdMembers } from './etcd-members';

/**
 * Real etcd members for every EtcdCluster of a namespace that a test names before it makes it —
 * a conformance run's examples and the copies its checks make (each named through its `copy`):
 * the members' addresses are in the hosts file before the operator first renders the cluster, so
 * its members' ConfigMap names addresses they listen on. Each cluster gets a loopback /24 of its
 * own, from `firstSubnet` up.
 */
export class EtcdMembersByName {
  private readonly clusters = new Map<string, Promise<EtcdMembers>>();

  constructor(
    readonly namespace: string,
    readonly hostsFile: string,
    private readonly firstSubnet: number,
    private readonly kubeconfig: string,
    /** How many clusters at most: the subnets from `firstSubnet` that are this test's. */
    private readonly most = 10,
  ) {}

  /** Runs the members of cluster `name` from now on (once per name). */
  follow(name: string): void {
    if (this.clusters.has(name)) return;
    if (this.clusters.size === this.most)
      throw new Error(
        `more than ${this.most} etcd clusters in ${this.namespace}: their addresses would not be this test's`,
      );
    const members = new EtcdMembers(
      this.namespace,
      name,
      this.hostsFile,
      this.firstSubnet + this.clusters.size,
      this.kubeconfig,
    );
    this.clusters.set(name, members.start());
  }

  /** Of each cluster followed, by name: the member pods whose etcd ran (each once). */
  async podsThatRan(): Promise<Record<string, string[]>> {
    const entries = await Promise.all(
      [...this.clusters].map(async ([name, members]) => {
        const events = (await members.catch(() => undefined))?.events ?? [];
        return [name, [...new Set(events.filter((e) => e.what === 'started').map((e) => e.pod))].sort()] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  /** Stops every member (a cluster whose start failed has nothing to stop). */
  async stop(): Promise<void> {
    await Promise.all([...this.clusters.values()].map(async (m) => (await m.catch(() => undefined))?.stop()));
  }
}
