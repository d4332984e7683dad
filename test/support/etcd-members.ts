import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ETCD_CLIENT_PORT, ETCD_PEER_PORT, memberDnsName } from '../../constructs/etcd/addresses';
import { membersConfigMapName } from '../../constructs/etcd/topology';
import type { EtcdClientTls, EtcdEndpoint } from '../../constructs/etcd/etcd-api';
import { etcdTlsSecrets, MEMBER_TLS_DIR } from '../../constructs/etcd/tls';
import { testKubeconfig } from './kube';

/** The etcd binaries the harness has, by version (none for a cluster from OPKIT_KUBECONFIG). */
export function etcdReleases(): Record<string, string> {
  return JSON.parse(process.env.OPKIT_TEST_ETCD_RELEASES ?? '{}') as Record<string, string>;
}

/**
 * On a member pod while its etcd runs: as a kubelet does, the pod object goes only once its
 * process has stopped, so its StatefulSet makes the pod again (and an operator sees a new pod)
 * only after the old member is down — never beside it.
 */
const MEMBER_PROCESS_FINALIZER = 'opkit.test/etcd-member-process';

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string; finalizers?: string[]; resourceVersion?: string };
  spec: {
    containers: { image: string; args?: string[] }[];
    volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[];
  };
  status?: { phase?: string };
}

interface Member {
  readonly pod: string;
  readonly uid: string;
  readonly version: string;
  /** The ConfigMap's variables it started with. */
  readonly env: Readonly<Record<string, string>>;
  /** The directory (under root) of its claim's volume. */
  readonly dataDir: string;
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
}

/** What happened to the members, in order, for tests that check "one at a time". */
export interface MemberEvent {
  readonly at: number;
  readonly what: 'started' | 'stopped';
  readonly pod: string;
  readonly version: string;
  /** On a start: the ConfigMap's variables the member started with. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * A kubelet for etcd pods: kwok runs the cluster's pods without containers, and this runs the
 * container of each Running etcd member pod of one EtcdCluster as a real etcd process on a
 * loopback address of its own — the version its image names, its claim's data directory, and
 * the initial cluster of the members' ConfigMap as it is when the pod starts, as a kubelet
 * would pass it. A pod deleted (or replaced) stops its process; a claim deleted loses its data.
 *
 * The operator under test reaches the members through the hosts file this writes
 * (`OPKIT_ETCD_HOSTS_FILE`), mapping each member's DNS name to its loopback address.
 */
export class EtcdMembers {
  readonly events: MemberEvent[] = [];
  private readonly running = new Map<string, Member>();
  private readonly refused = new Set<string>();
  private readonly down = new Set<string>();
  private readonly root: string;
  private proxy?: { process: ChildProcess; url: string };
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private stopped = false;
  /** With TLS: the cluster's client certificate (`<name>-client-tls`), as the tests' own client uses it. */
  private clientTls?: EtcdClientTls;
  /** Whether the members run with TLS, as their pods' flags say. */
  private tls = false;

  /**
   * @param subnet 1–254, a loopback /24 of its own (127.77.<subnet>.0) so clusters never share addresses.
   * @param kubeconfig the cluster's: the tier's shared plane unless a test runs one of its own.
   */
  constructor(
    readonly namespace: string,
    readonly cluster: string,
    readonly hostsFile: string,
    private readonly subnet: number,
    private readonly kubeconfig = testKubeconfig(),
  ) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), `etcd-members-${cluster}-`));
    const hosts = fs.existsSync(hostsFile) ? JSON.parse(fs.readFileSync(hostsFile, 'utf8')) : {};
    for (let i = 0; i < 10; i++) hosts[memberDnsName(cluster, namespace, i)] = this.address(i);
    fs.writeFileSync(hostsFile, JSON.stringify(hosts));
  }

  /** The loopback address member `ordinal` listens on. */
  address(ordinal: number): string {
    return `127.77.${this.subnet}.${ordinal + 1}`;
  }

  /** Member `ordinal`'s client URL: https once its pods run with TLS. */
  clientURL(ordinal: number): string {
    return `${this.tls ? 'https' : 'http'}://${this.address(ordinal)}:${ETCD_CLIENT_PORT}`;
  }

  /** Member `ordinal`'s client endpoint, with the cluster's client certificate under TLS. */
  endpoint(ordinal: number): EtcdEndpoint {
    return { url: this.clientURL(ordinal), tls: this.clientTls };
  }

  /** Where the client certificate's files are (TLS only), for etcdctl. */
  get clientTlsDir(): string {
    return path.join(this.root, 'tls', 'client-tls');
  }

  /** Starts following the pods (through a `kubectl proxy` of its own: plain HTTP, no client library). */
  async start(): Promise<this> {
    const proxy = spawn('kubectl', ['proxy', '--port=0', `--kubeconfig=${this.kubeconfig}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      proxy.stdout.once('data', (b: Buffer) => {
        const m = /127\.0\.0\.1:(\d+)/.exec(b.toString());
        if (m) resolve(`http://127.0.0.1:${m[1]}`);
        else reject(new Error(`kubectl proxy: ${b.toString()}`));
      });
      proxy.once('exit', (code) => {
        reject(new Error(`kubectl proxy exited with ${code}`));
      });
    });
    this.proxy = { process: proxy, url };
    const loop = async () => {
      if (this.stopped) return;
      this.ticking = this.tick().catch((err: unknown) => {
        process.stderr.write(`[etcd-members] ${err instanceof Error ? err.message : String(err)}\n`);
      });
      await this.ticking;
      if (!this.stopped) this.timer = setTimeout(() => void loop(), 250);
    };
    void loop();
    return this;
  }

  /** A merge patch of a pod, at the resourceVersion given (a Conflict throws: the next tick tries again). */
  private async patchPod(pod: Pod, patch: object): Promise<void> {
    const r = await fetch(`${this.proxy!.url}/api/v1/namespaces/${this.namespace}/pods/${pod.metadata.name}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify(patch),
    });
    if (!r.ok && r.status !== 404) throw new Error(`PATCH pod ${pod.metadata.name}: ${r.status} ${await r.text()}`);
  }

  private async withoutFinalizer(pod: Pod): Promise<void> {
    if (!pod.metadata.finalizers?.includes(MEMBER_PROCESS_FINALIZER)) return;
    await this.patchPod(pod, {
      metadata: {
        resourceVersion: pod.metadata.resourceVersion,
        finalizers: pod.metadata.finalizers.filter((f) => f !== MEMBER_PROCESS_FINALIZER),
      },
    });
  }

  private async get<T>(apiPath: string): Promise<T | undefined> {
    const r = await fetch(`${this.proxy!.url}${apiPath}`);
    if (r.status === 404) return undefined;
    if (!r.ok) throw new Error(`GET ${apiPath}: ${r.status}`);
    return (await r.json()) as T;
  }

  /** A member whose pod runs but whose etcd never starts (e.g. it cannot reach its peers). */
  refuse(pod: string): void {
    this.refused.add(pod);
  }

  /** Kills a member's etcd and keeps it down (its pod stays) until `revive`. */
  async kill(pod: string): Promise<void> {
    this.down.add(pod);
    await this.stopMember(pod, 'SIGKILL');
  }

  revive(pod: string): void {
    this.down.delete(pod);
    this.refused.delete(pod);
  }

  /**
   * Whether `pod`'s member has written its write-ahead log to the volume it runs on: from then on
   * the volume holds that member's ID, and etcd starts on it as that member only.
   */
  hasWal(pod: string): boolean {
    const m = this.running.get(pod);
    return !!m && fs.existsSync(path.join(this.root, m.dataDir, 'member', 'wal'));
  }

  /** The pods whose etcd runs now. */
  runningPods(): string[] {
    return [...this.running.keys()].sort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all([...this.running.keys()].map((p) => this.stopMember(p, 'SIGTERM')));
    // No member runs: none of their pods is held any more.
    const selector = encodeURIComponent(`app.kubernetes.io/name=etcd,app.kubernetes.io/instance=${this.cluster}`);
    const pods = await this.get<{ items: Pod[] }>(
      `/api/v1/namespaces/${this.namespace}/pods?labelSelector=${selector}`,
    );
    await Promise.all((pods?.items ?? []).map((p) => this.withoutFinalizer(p).catch(() => undefined)));
    this.proxy?.process.kill();
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  private async tick(): Promise<void> {
    const selector = encodeURIComponent(`app.kubernetes.io/name=etcd,app.kubernetes.io/instance=${this.cluster}`);
    const pods = (await this.get<{ items: Pod[] }>(
      `/api/v1/namespaces/${this.namespace}/pods?labelSelector=${selector}`,
    ))!.items;
    const live = new Map(
      pods
        // Members only: the StatefulSet's pods end in their ordinal (a snapshot Job's pod carries the labels too).
        .filter((p) => /-\d+$/.test(p.metadata.name))
        .filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
        .map((p) => [p.metadata.name, p]),
    );
    for (const [name, m] of this.running) {
      if (live.get(name)?.metadata.uid !== m.uid) await this.stopMember(name, 'SIGTERM');
    }
    // Deleted pods whose process is down now: they may go.
    for (const pod of pods.filter((p) => p.metadata.deletionTimestamp)) {
      if (this.running.get(pod.metadata.name)?.uid !== pod.metadata.uid) await this.withoutFinalizer(pod);
    }
    if ([...live.values()].some((p) => p.spec.containers[0]?.args?.includes('--client-cert-auth'))) {
      this.tls = true;
      await this.refreshCertificates();
    }
    // A volume is its claim's: a claim deleted and made again under the same name is a new, empty one.
    const claims = new Map(
      (await this.get<{ items: { metadata: { name: string; uid: string } }[] }>(
        `/api/v1/namespaces/${this.namespace}/persistentvolumeclaims`,
      ))!.items.map((c) => [c.metadata.name, `${c.metadata.name}-${c.metadata.uid}`]),
    );
    const inUse = new Set([...this.running.values()].map((m) => m.dataDir));
    for (const dir of fs.readdirSync(this.root).filter((d) => !d.endsWith('.log') && d !== 'tls')) {
      if (![...claims.values()].includes(dir) && !inUse.has(dir))
        fs.rmSync(path.join(this.root, dir), { recursive: true, force: true });
    }
    for (const [name, pod] of live) {
      if (this.running.has(name) || this.refused.has(name) || this.down.has(name)) continue;
      const claim = claims.get(this.claimOf(pod) ?? '');
      if (claim) await this.startMember(pod, claim); // as a kubelet: no volume, no start
    }
  }

  /**
   * As a kubelet updates a Secret volume: the members' certificate files written again whenever
   * their Secrets change (etcd reads them at each new connection), and the client's kept for the tests.
   */
  private async refreshCertificates(): Promise<void> {
    const secrets = etcdTlsSecrets(this.cluster);
    for (const [dir, secret] of [
      ['peer', secrets.peer],
      ['server', secrets.server],
      ['client-tls', secrets.client],
    ] as const) {
      const s = await this.get<{ data?: Record<string, string> }>(
        `/api/v1/namespaces/${this.namespace}/secrets/${secret}`,
      );
      if (!s?.data) continue;
      const target = path.join(this.root, 'tls', dir);
      fs.mkdirSync(target, { recursive: true });
      for (const [key, value] of Object.entries(s.data)) {
        const file = path.join(target, key);
        const content = Buffer.from(value, 'base64');
        if (!fs.existsSync(file) || !fs.readFileSync(file).equals(content))
          fs.writeFileSync(file, content, { mode: 0o600 });
      }
      if (dir === 'client-tls') {
        const text = (k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString('utf8');
        this.clientTls = { ca: text('ca.crt'), cert: text('tls.crt'), key: text('tls.key') };
      }
    }
  }

  /** The pod's TLS flags, its files where `refreshCertificates` keeps them (the pod's paths are the kubelet's). */
  private tlsArgs(args: readonly string[]): string[] {
    return args
      .filter((a) =>
        /^--(peer-)?(cert|key|trusted-ca|client-cert|skip|experimental-peer-skip)|^--peer-cert-allowed/.test(a),
      )
      .map((a) => a.replace(MEMBER_TLS_DIR, path.join(this.root, 'tls')));
  }

  private claimOf(pod: Pod | undefined): string | undefined {
    return pod?.spec.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
  }

  private async startMember(pod: Pod, volume: string): Promise<void> {
    const name = pod.metadata.name;
    const ordinal = Number(/-(\d+)$/.exec(name)![1]);
    const container = pod.spec.containers[0]!;
    const version = /:v(\d+\.\d+\.\d+)$/.exec(container.image)?.[1] ?? '';
    const releases = etcdReleases();
    const bin = releases[version];
    if (!bin) throw new Error(`no etcd ${version} binary for pod ${name} (have ${Object.keys(releases).join(', ')})`);
    const cm = await this.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${this.namespace}/configmaps/${membersConfigMapName(this.cluster)}`,
    );
    if (!cm?.data) return; // as a kubelet: the pod cannot start without its ConfigMap
    const token = container.args?.find((a) => a.startsWith('--initial-cluster-token='));
    const tls = container.args?.includes('--client-cert-auth') === true;
    // As a kubelet: no start before the pod's Secret volumes can be mounted.
    if (tls && !['server', 'peer'].every((d) => fs.existsSync(path.join(this.root, 'tls', d, 'tls.crt')))) return;
    const url = tls ? 'https' : 'http';
    const dataDir = path.join(this.root, volume);
    const ip = this.address(ordinal);
    // Held until its process stops (see MEMBER_PROCESS_FINALIZER).
    const finalizers = pod.metadata.finalizers ?? [];
    if (!finalizers.includes(MEMBER_PROCESS_FINALIZER))
      await this.patchPod(pod, {
        metadata: {
          resourceVersion: pod.metadata.resourceVersion,
          finalizers: [...finalizers, MEMBER_PROCESS_FINALIZER],
        },
      });
    const logFile = fs.openSync(path.join(this.root, `${name}.log`), 'a');
    const child = spawn(
      bin,
      [
        `--name=${name}`,
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${url}://${ip}:${ETCD_CLIENT_PORT}`,
        `--advertise-client-urls=${url}://${ip}:${ETCD_CLIENT_PORT}`,
        `--listen-peer-urls=${url}://${ip}:${ETCD_PEER_PORT}`,
        `--initial-advertise-peer-urls=${url}://${ip}:${ETCD_PEER_PORT}`,
        ...(token ? [token] : []),
        ...(tls ? this.tlsArgs(container.args ?? []) : []),
        '--listen-metrics-urls=',
      ],
      {
        // As the pod's envFrom: every variable of the members' ConfigMap as it is at the start.
        env: { PATH: process.env.PATH, ...cm.data },
        stdio: ['ignore', logFile, logFile],
      },
    );
    fs.closeSync(logFile);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        // An etcd that exits on its own (e.g. removed from the cluster) is restarted by the next tick, as a kubelet would.
        if (this.running.get(name)?.process === child) this.running.delete(name);
        resolve();
      }),
    );
    this.running.set(name, {
      pod: name,
      uid: pod.metadata.uid,
      version,
      env: cm.data,
      dataDir: volume,
      process: child,
      exited,
    });
    this.events.push({ at: Date.now(), what: 'started', pod: name, version, env: cm.data });
  }

  private async stopMember(pod: string, signal: NodeJS.Signals): Promise<void> {
    const m = this.running.get(pod);
    if (!m) return;
    this.running.delete(pod);
    m.process.kill(signal);
    await m.exited;
    this.events.push({ at: Date.now(), what: 'stopped', pod, version: m.version });
  }

  /** A member's log, for failure messages. */
  log(pod: string): string {
    const f = path.join(this.root, `${pod}.log`);
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').slice(-30).join('\n') : '';
  }
}
