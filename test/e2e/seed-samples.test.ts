/**
 * The product owner's seed samples (dist/samples/), applied verbatim on the real node with the
 * operators `kubectl apply -f dist/` installs running as Pods: each must do for real what its kind
 * promises, not only what kwok reports.
 */
import * as path from 'node:path';
import { createTestNamespace, eventually, getJson, getJsonIfExists, kubectl, kubectlOk } from '../support/kube';
import { addedMemberId } from '../support/etcdctl-output';
import {
  admittedScript,
  commandInPod,
  etcdctlWithCertificate,
  nodeScriptInPod,
  reconcilerImage,
  runCronJobNow,
} from '../support/pod-script';
import { DIST_CRONTAB_OPERATOR, takeRunLock } from './run-coordination';

const ROOT = path.resolve(__dirname, '..', '..');
const skip = process.env.OPKIT_E2E_SKIP;

// Under load an etcd upgrade, one member at a time, takes minutes; each wait below is shorter.
jest.setTimeout(420_000);

if (skip) test.todo(`the seed samples on a real node — skipped: ${skip}`);

(skip ? describe.skip : describe)('the seed samples on a real node', () => {
  let ns: string;

  beforeAll(() => {
    ns = createTestNamespace('e2e-seeds');
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  /**
   * etcdctl as a client holding the cluster's client certificate, in a pod of its own (the image of
   * the version the cluster runs), through the client Service by its name.
   */
  const etcdctl = (...args: string[]) =>
    etcdctlWithCertificate(
      ns,
      'my-etcd-cluster',
      (getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status?.version as string | undefined) ?? '3.5.21',
      ...args,
    );
  /** The reasons of the Events about the sample cluster. */
  const clusterEventReasons = (): string[] =>
    getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=my-etcd-cluster']).items.map(
      (e: any) => e.reason,
    );
  /** A merge patch of the sample cluster's spec, as `kubectl patch` makes it. */
  const patchCluster = (spec: object) =>
    kubectlOk(['patch', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec })]);
  /**
   * What an etcd wait saw when it gave up: the cluster's step and conditions, its members, the
   * StatefulSet's size, the pods and claims, the cluster's Events and the operator's last log lines.
   */
  const explainEtcd = (): string => {
    const c = getJsonIfExists(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
    const sts = getJsonIfExists(['get', 'statefulset', 'my-etcd-cluster', '-n', ns]);
    const lines = [
      `status.step: ${JSON.stringify(c?.status?.step)}`,
      `conditions: ${JSON.stringify((c?.status?.conditions ?? []).map((x: any) => [x.type, x.status, x.reason, x.message]))}`,
      `etcdMembers: ${JSON.stringify(c?.status?.etcdMembers)}`,
      `statefulset replicas: ${String(sts?.spec?.replicas)} (ready ${String(sts?.status?.readyReplicas)})`,
      kubectl(['get', 'pods,pvc', '-n', ns, '-o', 'wide']).stdout,
      `events: ${clusterEventReasons().join(', ')}`,
      kubectl(['logs', '-n', 'etcd-system', 'deployment/etcd-operator', '--tail=200']).stdout,
    ];
    return lines.join('\n');
  };
  /** The cluster settled at n members: every one healthy, Available, no step under way. */
  const settled = (n: number) =>
    eventually(
      `${String(n)} healthy members`,
      () => {
        const c = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
        const members = (c.status?.etcdMembers ?? []) as { healthy: boolean }[];
        const available = c.status?.conditions?.some((x: any) => x.type === 'Available' && x.status === 'True');
        return members.length === n && members.every((m) => m.healthy) && available && !c.status?.step ? c : undefined;
      },
      240_000,
      1000,
      explainEtcd,
    );

  test("CronTab: the seed's sample (busybox, every minute) runs a real Job to completion on the node", async () => {
    // dist/'s CronTab operator, which olm-install stands aside while it runs beside this file.
    const release = await takeRunLock(DIST_CRONTAB_OPERATOR);
    try {
      await cronTabSampleRuns();
    } finally {
      release();
    }
  });

  /** The CronTab sample's CronJob runs a Job to completion on the node, and the CronTab records the run. */
  async function cronTabSampleRuns(): Promise<void> {
    kubectlOk(['rollout', 'status', 'deployment/crontab-operator', '-n', 'crontab-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', path.join(ROOT, 'dist', 'samples', 'crontab-sample.k8s.yaml')]);
    // CronJobs schedule to the minute: the first run starts within a minute of the CronJob.
    const job = await eventually(
      'a Job of the CronTab to complete',
      () =>
        getJson(['get', 'jobs', '-n', ns]).items.find(
          (j: any) =>
            j.metadata.ownerReferences?.some((o: any) => o.kind === 'CronJob' && o.name === 'my-new-cron-object') &&
            j.status?.succeeded >= 1,
        ),
      150_000,
      1000,
    );
    const [pod] = getJson(['get', 'pods', '-n', ns, '-l', `job-name=${job.metadata.name as string}`]).items;
    expect(pod.spec.nodeName).toBe('opkit-node');
    expect(pod.spec.containers[0].image).toBe('busybox');
    // busybox's own command (sh, no script) ran in the container and exited 0.
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const crontab = await eventually(
      'the CronTab to record its run',
      () => {
        const ct = getJson(['get', 'ct', 'my-new-cron-object', '-n', ns]);
        return ct.status?.lastScheduleTime ? ct : undefined;
      },
      60_000,
    );
    expect(crontab.status.schedule).toBe('* * * * *');
  }

  test("EtcdCluster: the seed's sample forms one cluster of 3 real etcd members that find each other by cluster DNS", async () => {
    kubectlOk(['rollout', 'status', 'deployment/etcd-operator', '-n', 'etcd-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', path.join(ROOT, 'dist', 'samples', 'etcd-sample.k8s.yaml')]);
    // Available comes with a quorum; the test waits for every member to report healthy.
    const cluster = await settled(3);
    const members = cluster.status.etcdMembers as { name: string; healthy: boolean; leader: boolean }[];
    expect(members.map((m) => [m.name, m.healthy])).toEqual([
      ['my-etcd-cluster-0', true],
      ['my-etcd-cluster-1', true],
      ['my-etcd-cluster-2', true],
    ]);
    expect(members.filter((m) => m.leader)).toHaveLength(1);
    // etcd itself, to a client with the cluster's certificate, through the client Service by its name.
    const health = await etcdctl('endpoint', 'health', '--cluster');
    expect(health.split('\n').filter((l) => l.includes(' is healthy'))).toHaveLength(3);
    await etcdctl('put', 'seed', 'kept by the cluster');
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    // Each member's data on a claim the node's default StorageClass provisioned.
    const claims = getJson(['get', 'pvc', '-n', ns, '-l', 'app.kubernetes.io/instance=my-etcd-cluster']).items;
    expect(claims.map((c: any) => c.status.phase)).toEqual(['Bound', 'Bound', 'Bound']);
    // Ready by etcd's own /readyz and alive by /livez on the plain metrics port: probes the kubelet
    // really ran, no restart.
    // The kubelet probes every 5 s: etcd may call a member healthy a moment before its readiness
    // probe has run.
    const pods = await eventually(
      'the members ready by their probes',
      () => {
        const list = [0, 1, 2].map((i) => getJson(['get', 'pod', `my-etcd-cluster-${i}`, '-n', ns]));
        return list.every((p) => p.status.containerStatuses?.[0]?.ready === true) ? list : undefined;
      },
      60_000,
      1000,
    );
    for (const pod of pods) {
      expect(pod.spec.containers[0].livenessProbe.httpGet).toMatchObject({ path: '/livez', port: 'metrics' });
      expect(pod.status.containerStatuses[0].restartCount).toBe(0);
    }
    // Its NetworkPolicy: the peer port from its members only (enforced on this node: see the TLS test).
    const policy = getJson(['get', 'networkpolicy', 'my-etcd-cluster', '-n', ns]);
    expect(policy.spec.ingress.find((r: any) => r.ports[0].port === 2380).from).toEqual([
      { podSelector: { matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'member' }) } },
    ]);
  });

  /**
   * What a pod with no certificate of the cluster's gets from each port, from namespace `from`: a
   * Node.js script (the reconciler image) that reads, writes and adds a member over TLS without a
   * client certificate, speaks plain HTTP to both ports and asks the metrics port's /livez (open to
   * any pod), all at once, and prints one line per try in that order. A connection the node's
   * NetworkPolicy enforcer refuses ends `refused ECONNREFUSED` (rejected) or `refused timeout` (dropped).
   */
  const triesWithoutCertificate = (from: string, options: { admitted?: boolean } = {}) => {
    const host = (i: number) => `my-etcd-cluster-${i}.my-etcd-cluster.${ns}.svc`;
    // A pod the policy admits waits until the enforcer has seen it (admittedScript).
    const waitAdmitted = options.admitted ? admittedScript(host(0), 2379) : 'const admitted = async () => {};';
    const script = `
      const https = require('node:https'), http = require('node:http');
      ${waitAdmitted}
      const tries = [
        ['read', 'https://my-etcd-cluster-client.${ns}.svc:2379/v3/kv/range', { key: 'c2VlZA==' }],
        ['write', 'https://my-etcd-cluster-client.${ns}.svc:2379/v3/kv/put', { key: 'c2VlZA==', value: 'UFdORUQ=' }],
        ['member add', 'https://${host(0)}:2379/v3/cluster/member/add', { peerURLs: ['https://10.9.9.9:2380'], isLearner: true }],
        ['plaintext client', 'http://${host(0)}:2379/v3/kv/range', { key: 'c2VlZA==' }],
        ['plaintext peer', 'http://${host(1)}:2380/members', {}],
        ['metrics', 'http://${host(0)}:2381/livez'],
      ];
      const attempt = ([what, url, body]) =>
        new Promise((resolve) => {
          const lib = url.startsWith('https') ? https : http;
          const method = body ? 'POST' : 'GET';
          const req = lib.request(url, { method, rejectUnauthorized: false, timeout: 8000 }, (res) => {
            let text = '';
            res.on('data', (b) => (text += b));
            res.on('end', () => resolve(what + ': HTTP ' + res.statusCode + ' ' + text.slice(0, 120).replace(/\\s+/g, ' ')));
          });
          req.on('timeout', () => req.destroy(new Error('timeout')));
          req.on('error', (e) => resolve(what + ': refused ' + (e.code || e.message)));
          req.end(body ? JSON.stringify(body) : undefined);
        });
      admitted()
        .then(() => Promise.all(tries.map(attempt)))
        .then((lines) => lines.forEach((line) => console.log(line)));`;
    return nodeScriptInPod(from, 'default', script);
  };

  test("EtcdCluster: TLS and a NetworkPolicy by default — from another namespace only the metrics port answers (the node enforces the policy); in the cluster's own namespace a pod without the cluster's certificate can neither read, write nor add a member, plaintext is refused and the peer port stays closed to non-members; a client with <name>-client-tls reads and writes", async () => {
    const unenforced = process.env.OPKIT_E2E_NETWORK_POLICIES_MISSING;
    if (unenforced)
      throw new Error(`the node enforces no NetworkPolicy, so the policy cannot be proven: ${unenforced}`);
    const cluster = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
    expect(cluster.status.transport).toBe('TLS');
    expect(Date.parse(cluster.status.certificatesExpire)).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    const args = getJson(['get', 'pod', 'my-etcd-cluster-0', '-n', ns]).spec.containers[0].args as string[];
    expect(args).toEqual(
      expect.arrayContaining([
        '--client-cert-auth',
        '--peer-client-cert-auth',
        '--listen-peer-urls=https://0.0.0.0:2380',
      ]),
    );
    const attacker = createTestNamespace('e2e-attacker');
    try {
      const tried = async (from: string) => {
        const lines = (await triesWithoutCertificate(from, { admitted: from === ns })).trim().split('\n');
        process.stderr.write(
          `[etcd tls] from ${from === ns ? 'its own namespace' : 'another namespace'}: ${lines.join('; ')}\n`,
        );
        return lines;
      };
      // Another namespace: dropped by the policy before any TLS, on every port but the probes' own.
      // (Dropped, the connection times out; rejected, the enforcer answers for the pod. etcd itself
      // listens on both ports, so neither is etcd's answer.)
      const blocked = /^[a-z ]+: refused (timeout|ECONNREFUSED|EHOSTUNREACH)$/;
      const outside = await tried(attacker);
      expect(outside).toHaveLength(6);
      for (const line of outside.slice(0, 5)) expect(line).toMatch(blocked);
      expect(outside[5]).toMatch(/^metrics: HTTP 200 /);
      // Its own namespace, a client by default: the client port answers, and refuses a client
      // without a certificate in the handshake (or answers 400 to plain HTTP): never served. The
      // peer port is for members only.
      const inside = await tried(ns);
      expect(inside).toHaveLength(6);
      for (const line of inside.slice(0, 3)) expect(line).toMatch(/^[a-z ]+: refused ERR_SSL_/);
      expect(inside[3]).toMatch(/^plaintext client: (refused ECONNRESET|HTTP 400 )/);
      expect(inside[4]).toMatch(blocked);
      expect(inside[5]).toMatch(/^metrics: HTTP 200 /);
    } finally {
      kubectl(['delete', 'namespace', attacker, '--wait=false']);
    }
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    expect((await etcdctl('member', 'list')).trim().split('\n')).toHaveLength(3);
  });

  test('EtcdCluster: certificates rotated (their Secrets deleted, issued again of the same CAs) with no member restarted, quorum kept, the key kept', async () => {
    const secret = (name: string) => getJsonIfExists(['get', 'secret', name, '-n', ns]);
    const servedSerial = async () =>
      (
        await commandInPod(ns, {
          image: reconcilerImage(),
          command: [
            '/usr/local/bin/node',
            '-e',
            `${admittedScript(`my-etcd-cluster-0.my-etcd-cluster.${ns}.svc`, 2379)}
             const fs = require('node:fs'), t = (f) => fs.readFileSync('/tls/' + f);
             admitted().then(() => {
               const s = require('node:tls').connect({ host: 'my-etcd-cluster-0.my-etcd-cluster.${ns}.svc', port: 2379,
                 ca: t('ca.crt'), cert: t('tls.crt'), key: t('tls.key') }, () => { console.log(s.getPeerCertificate().serialNumber); s.end(); });
             });`,
          ],
          secret: { name: 'my-etcd-cluster-client-tls', mountPath: '/tls' },
        })
      ).trim();
    const ca = secret('my-etcd-cluster-ca').data;
    const before = await servedSerial();
    const restarts = () =>
      [0, 1, 2].map(
        (i) => getJson(['get', 'pod', `my-etcd-cluster-${i}`, '-n', ns]).status.containerStatuses[0].restartCount,
      );
    const restartsBefore = restarts();
    kubectlOk(['delete', 'secret', '-n', ns, 'my-etcd-cluster-server-tls', 'my-etcd-cluster-peer-tls']);
    await eventually(
      'the certificates issued again',
      () => (secret('my-etcd-cluster-server-tls') && secret('my-etcd-cluster-peer-tls') ? true : undefined),
      90_000,
      1000,
    );
    const after = await eventually(
      'member 0 serving its new certificate (the kubelet updates Secret volumes within about a minute)',
      async () => {
        const now = await servedSerial().catch(() => undefined);
        return now && now !== before ? now : undefined;
      },
      240_000,
      5000,
    );
    expect(after).not.toBe(before);
    expect(secret('my-etcd-cluster-ca').data).toEqual(ca);
    const c = await settled(3);
    expect(c.status.conditions.find((x: any) => x.type === 'Available').status).toBe('True');
    expect(restarts()).toEqual(restartsBefore);
    await etcdctl('put', 'rotated', 'yes');
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    expect(clusterEventReasons()).toContain('CertificatesIssued');
  });

  test("EtcdCluster: its CAs rotated when asked — each member restarted twice by the operator, one at a time, the cluster Available throughout; the old CA's client certificate refused after, the key kept", async () => {
    const secret = (name: string) => getJson(['get', 'secret', name, '-n', ns]);
    const before = secret('my-etcd-cluster-ca').data;
    const oldClient = secret('my-etcd-cluster-client-tls').data;
    const uids = () =>
      [0, 1, 2].map((i) => getJsonIfExists(['get', 'pod', `my-etcd-cluster-${i}`, '-n', ns])?.metadata.uid);
    const seen = new Set<string>(uids().filter((u): u is string => !!u));
    const started = Date.now();
    kubectlOk(['annotate', 'etcdcluster', 'my-etcd-cluster', '-n', ns, 'etcd.database.coreos.com/rotate-ca=e2e-1']);
    // Watched once a second until the operator says it is done: the cluster's availability (a
    // healthy voting quorum, as etcd reports it) and every member pod that existed.
    const unavailable: string[] = [];
    await eventually(
      'the CA rotation to end (CAsRotated)',
      () => {
        const c = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
        const available = c.status?.conditions?.find((x: any) => x.type === 'Available');
        if (available?.status !== 'True') unavailable.push(`${available?.reason}: ${available?.message}`);
        for (const u of uids()) if (u) seen.add(u);
        return clusterEventReasons().includes('CAsRotated') ? true : undefined;
      },
      600_000,
      1000,
      explainEtcd,
    );
    const c = await settled(3);
    process.stderr.write(`[seed-samples] CAs rotated in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    expect(unavailable).toEqual([]);
    expect(clusterEventReasons()).toEqual(expect.arrayContaining(['CARotationStarted', 'CAsTrusted', 'CAsRotated']));
    // Three pods at the start, each made again twice: nine.
    expect(seen.size).toBe(9);
    expect(c.status.conditions.find((x: any) => x.type === 'Degraded').status).toBe('False');
    const after = secret('my-etcd-cluster-ca').data;
    expect(after['client-ca.crt']).not.toBe(before['client-ca.crt']);
    expect(after['peer-ca.crt']).not.toBe(before['peer-ca.crt']);
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    // The old client certificate, checking the members with the new CA: refused.
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'old-client-tls' },
        data: { 'tls.crt': oldClient['tls.crt'], 'tls.key': oldClient['tls.key'], 'ca.crt': after['client-ca.crt'] },
      }),
    });
    const old = await commandInPod(ns, {
      image: `quay.io/coreos/etcd:v${c.status.version as string}`,
      command: [
        'etcdctl',
        '--endpoints=https://my-etcd-cluster-client:2379',
        '--cacert=/tls/ca.crt',
        '--cert=/tls/tls.crt',
        '--key=/tls/tls.key',
        '--dial-timeout=10s',
        '--command-timeout=15s',
        'get',
        'seed',
      ],
      secret: { name: 'old-client-tls', mountPath: '/tls' },
      failureIsAnAnswer: true,
    });
    // Refused by the members' TLS once connected — a TLS alert, or under TLS 1.3 the connection
    // closed after the handshake (broken pipe, reset) — not by the network: the policy admits this
    // namespace's pods, and a rejection there is `connection refused` before any connection.
    expect(old).toMatch(
      /tls: (bad certificate|unknown certificate authority|certificate required)|broken pipe|connection reset by peer/,
    );
    expect(old).not.toContain('connection refused');
    expect(old).not.toContain('kept by the cluster');
  });

  test('EtcdCluster: scaled 3 → 5 → 3 through membership, and a deleted member pod replaced, the key kept throughout', async () => {
    kubectlOk(['scale', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--replicas=5']);
    await settled(5);
    expect((await etcdctl('member', 'list')).trim().split('\n')).toHaveLength(5);
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    kubectlOk(['scale', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--replicas=3']);
    await settled(3);
    expect((await etcdctl('member', 'list')).trim().split('\n')).toHaveLength(3);
    // A member's pod lost: the StatefulSet makes it again on its claim, and it rejoins as itself.
    const before = getJson(['get', 'pod', 'my-etcd-cluster-1', '-n', ns]).metadata.uid as string;
    kubectlOk(['delete', 'pod', 'my-etcd-cluster-1', '-n', ns]);
    await eventually(
      'member 1 back',
      () => {
        const pod = getJson(['get', 'pod', 'my-etcd-cluster-1', '-n', ns]);
        const ready = pod.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True');
        return pod.metadata.uid !== before && ready ? true : undefined;
      },
      120_000,
      1000,
    );
    await settled(3);
    expect(
      (await etcdctl('endpoint', 'health', '--cluster')).split('\n').filter((l) => l.includes(' is healthy')),
    ).toHaveLength(3);
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
  });

  test("EtcdCluster: a member's claim and pod deleted together (its data gone) — replaced by the operator alone, the key kept", async () => {
    const started = Date.now();
    const idOf = () =>
      (
        getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status.etcdMembers as {
          name: string;
          id: string;
        }[]
      ).find((m) => m.name === 'my-etcd-cluster-2')?.id;
    const before = idOf();
    const claimBefore = getJson(['get', 'pvc', 'data-my-etcd-cluster-2', '-n', ns]).metadata.uid as string;
    kubectlOk(['delete', 'pvc', 'data-my-etcd-cluster-2', '-n', ns, '--wait=false']);
    kubectlOk(['delete', 'pod', 'my-etcd-cluster-2', '-n', ns, '--wait=false']);
    await eventually(
      'member 2 back under a new ID, on a new claim',
      () => {
        const id = idOf();
        const claim = getJsonIfExists(['get', 'pvc', 'data-my-etcd-cluster-2', '-n', ns])?.metadata.uid;
        return id && id !== before && claim && claim !== claimBefore ? true : undefined;
      },
      300_000,
      2000,
      explainEtcd,
    );
    const c = await settled(3);
    process.stderr.write(
      `[etcd lost member] replaced by the operator in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    expect(clusterEventReasons()).toEqual(expect.arrayContaining(['MemberDataLost', 'MemberRemoved', 'MemberAdded']));
    expect(c.status.etcdMembers.find((m: any) => m.name === 'my-etcd-cluster-2').claimUID).not.toBe(claimBefore);
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
  });

  test("EtcdCluster: two of three members' data lost for good (claims and pods gone, no claim can be made) — QuorumLost with a Warning, the survivor not restarted by its liveness probe while it lasts; recovered from the survivor by the user's choice, the keys kept", async () => {
    await settled(3);
    const survivor = 'my-etcd-cluster-0';
    await etcdctl('put', 'before-loss', 'kept');
    const pod = (name: string) => getJson(['get', 'pod', name, '-n', ns]);
    const restartsBefore = pod(survivor).status.containerStatuses[0].restartCount as number;
    // As storage lost with a node: the lost members' volumes cannot be made again, so their pods never start.
    const claimsNow = getJson(['get', 'pvc', '-n', ns]).items.length as number;
    kubectlOk(['create', 'quota', 'no-new-claims', '-n', ns, `--hard=persistentvolumeclaims=${claimsNow - 2}`]);
    let recoveredIn: number | undefined;
    let chosen: number | undefined;
    try {
      for (const i of [1, 2]) {
        kubectlOk(['delete', 'pvc', `data-my-etcd-cluster-${i}`, '-n', ns, '--wait=false']);
        kubectlOk(['delete', 'pod', `my-etcd-cluster-${i}`, '-n', ns, '--wait=false']);
      }
      const lostAt = Date.now();
      const available = await eventually(
        'Available=False QuorumLost',
        () => {
          const a = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status?.conditions?.find(
            (x: any) => x.type === 'Available',
          );
          return a?.reason === 'QuorumLost' ? a : undefined;
        },
        180_000,
        1000,
      );
      expect(available.status).toBe('False');
      expect(available.message).toContain(`only ${survivor} of 3 members answers`);
      await eventually('a Warning Event QuorumLost', () =>
        clusterEventReasons().includes('QuorumLost') ? true : undefined,
      );
      // The loss outlasts the window in which a liveness probe that waits on quorum would restart the
      // survivor: its failures in a row, from the loss (its initial delay passed long before).
      const probe = pod(survivor).spec.containers[0].livenessProbe as {
        periodSeconds: number;
        failureThreshold: number;
      };
      const window = (probe.periodSeconds * probe.failureThreshold + 10) * 1000;
      await eventually(
        "the loss to outlast the liveness probe's window",
        () => (Date.now() - lostAt > window ? true : undefined),
        window + 60_000,
        2000,
      );
      expect(pod(survivor).status.containerStatuses[0].restartCount).toBe(restartsBefore);
      chosen = Date.now();
      kubectlOk([
        'annotate',
        'etcdcluster',
        'my-etcd-cluster',
        '-n',
        ns,
        `etcd.database.coreos.com/recover-from=${survivor}`,
      ]);
      await eventually(
        'the Event QuorumRecovered',
        () => (clusterEventReasons().includes('QuorumRecovered') ? true : undefined),
        180_000,
        1000,
      );
      recoveredIn = (Date.now() - (chosen ?? 0)) / 1000;
    } finally {
      // Claims can be made again: the lost members come back empty, added by the operator one at a time.
      kubectl(['delete', 'quota', 'no-new-claims', '-n', ns]);
    }
    await settled(3);
    process.stderr.write(
      `[etcd quorum recovery] a cluster of one from ${survivor} ${recoveredIn?.toFixed(1) ?? '?'} s after the annotation; 3 members healthy again ${((Date.now() - (chosen ?? 0)) / 1000).toFixed(1)} s after it\n`,
    );
    expect(clusterEventReasons()).toEqual(
      expect.arrayContaining(['QuorumRecoveryStarted', 'PodRestarted', 'QuorumRecovered', 'MemberAdded']),
    );
    expect(
      getJson(['get', 'configmap', 'my-etcd-cluster-members', '-n', ns]).data.ETCD_FORCE_NEW_CLUSTER,
    ).toBeUndefined();
    expect((await etcdctl('get', 'before-loss', '--print-value-only')).trim()).toBe('kept');
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    expect((await etcdctl('member', 'list')).trim().split('\n')).toHaveLength(3);
    kubectlOk(['annotate', 'etcdcluster', 'my-etcd-cluster', '-n', ns, 'etcd.database.coreos.com/recover-from-']);
  });

  test('EtcdCluster: upgraded from 3.5 to 3.6 one member at a time, the key kept', async () => {
    const releases = Object.keys(JSON.parse(process.env.OPKIT_E2E_ETCD_RELEASES ?? '{}') as Record<string, string>);
    const next = releases.find((v) => v.startsWith('3.6.'));
    if (!next) throw new Error(`no etcd 3.6 image on the node (releases: ${releases.join(', ')})`);
    patchCluster({ version: next });
    const upgraded = await eventually(
      `every member on ${next}`,
      () => {
        const c = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
        const members = (c.status?.etcdMembers ?? []) as { healthy: boolean; version: string }[];
        return members.length === 3 && members.every((m) => m.healthy && m.version === next) && !c.status?.step
          ? c
          : undefined;
      },
      300_000,
      1000,
    );
    expect(upgraded.status.version).toBe(next);
    const out = await etcdctl('get', 'seed', '--print-value-only');
    expect(out.trim()).toBe('kept by the cluster');
  });

  test("EtcdCluster: a member added by hand (etcdctl member add, with the cluster's client certificate) is Degraded ForeignMember within a reconcile, by the ID etcdctl shows; removed, the cluster is as before", async () => {
    // etcd takes a member add only once every voter has been connected for 5 s (its strict
    // reconfiguration check): just after the upgrade's last restart it answers "unhealthy cluster".
    const added = await eventually(
      'etcd to take a member add',
      async () => {
        try {
          return await etcdctl('member', 'add', 'intruder', '--learner', '--peer-urls=https://10.9.9.9:2380');
        } catch (err) {
          if (err instanceof Error && err.message.includes('etcdserver: unhealthy cluster')) return undefined;
          throw err;
        }
      },
      60_000,
      1000,
    );
    const hex = addedMemberId(added);
    // Removed whether or not it was reported: a foreign member left behind holds every later
    // membership step of this cluster (the operator waits for a person), so every later test here.
    try {
      await foreignMemberReported(hex);
    } finally {
      await etcdctl('member', 'remove', hex);
    }
    const c = await settled(3);
    expect(c.status.conditions.find((x: any) => x.type === 'Degraded').status).toBe('False');
    expect((await etcdctl('member', 'list')).trim().split('\n')).toHaveLength(3);
  });

  /** The cluster Degraded ForeignMember naming member `hex`, with an Event. */
  async function foreignMemberReported(hex: string): Promise<void> {
    const degraded = await eventually(
      'Degraded ForeignMember',
      () => {
        const d = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status?.conditions?.find(
          (x: any) => x.type === 'Degraded',
        );
        return d?.reason === 'ForeignMember' ? d : undefined;
      },
      60_000,
      1000,
      explainEtcd,
    );
    expect(degraded.message).toContain(hex);
    expect(clusterEventReasons()).toContain('ForeignMember');
  }

  test('EtcdCluster: a fragmented database is defragmented by the operator, one member at a time, and each file shrinks', async () => {
    // Past a small threshold, so a few MiB written, deleted and compacted are enough.
    patchCluster({ defragmentation: { minimumSize: '2Mi', fragmentedPercent: 50 } });
    // 24 values of 128 KiB through the members' JSON gateway, deleted, then history compacted: the
    // pages stay in each member's file until a defragmentation gives them back.
    const client = `https://my-etcd-cluster-client.${ns}.svc:2379`;
    await commandInPod(ns, {
      image: reconcilerImage(),
      command: [
        '/usr/local/bin/node',
        '-e',
        `${admittedScript(`my-etcd-cluster-client.${ns}.svc`, 2379)}
         const fs = require('node:fs'), t = (f) => fs.readFileSync('/tls/' + f);
         const call = (path, body) => new Promise((resolve, reject) => {
           const req = require('node:https').request('${client}' + path,
             { method: 'POST', ca: t('ca.crt'), cert: t('tls.crt'), key: t('tls.key') }, (res) => {
               let text = ''; res.on('data', (b) => (text += b)); res.on('end', () => res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(text)));
             });
           req.on('error', reject); req.end(JSON.stringify(body));
         });
         const b64 = (s) => Buffer.from(s).toString('base64');
         (async () => {
           await admitted();
           const value = b64('x'.repeat(128 * 1024));
           for (let i = 0; i < 24; i++) await call('/v3/kv/put', { key: b64('bulk/' + i), value });
           const deleted = await call('/v3/kv/deleterange', { key: b64('bulk/'), range_end: b64('bulk0') });
           await call('/v3/kv/compaction', { revision: deleted.header.revision, physical: true });
           // Writes after it, each in a commit of its own (etcd commits its backend every 100 ms):
           // bbolt gives a commit's freed pages back only when a later write transaction begins
           // with no read transaction older than that commit open, and etcd opens its read
           // transaction at every commit, so it takes two commits after the compaction's. With
           // one write, landing in the compaction's own commit under load, an idle member went on
           // counting the compacted pages as in use (a CI run: 3.2 of 4.1 MB, never defragmented).
           for (let i = 0; i < 3; i++) {
             await call('/v3/kv/put', { key: b64('after-compaction'), value: b64('yes ' + i) });
             await new Promise((r) => setTimeout(r, 300));
           }
           console.log('written, deleted and compacted at revision ' + deleted.header.revision);
         })().catch((e) => { console.error(e.message); process.exit(1); });`,
      ],
      secret: { name: 'my-etcd-cluster-client-tls', mountPath: '/tls' },
    });
    const sizes = () =>
      (getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status?.etcdMembers ?? []).map(
        (m: any) => (m.dbSizeBytes ?? 0) as number,
      );
    await eventually(
      'a defragmentation of every member (Defragmented, three times)',
      () =>
        getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=my-etcd-cluster'])
          .items.filter((e: any) => e.reason === 'Defragmented')
          .reduce((n: number, e: any) => n + ((e.count as number | undefined) ?? 1), 0) >= 3
          ? true
          : undefined,
      180_000,
      2000,
      explainEtcd,
    );
    const c = await settled(3);
    // Each file back under the threshold the operator defragments past.
    expect(sizes().every((size: number) => size > 0 && size < 2 * 1024 * 1024)).toBe(true);
    expect(c.status.conditions.find((x: any) => x.type === 'Degraded').status).toBe('False');
    expect((await etcdctl('get', 'seed', '--print-value-only')).trim()).toBe('kept by the cluster');
    patchCluster({ defragmentation: null });
  });

  test('EtcdCluster: backups turned on, a Job from the backup CronJob writes a snapshot that etcdutl reads back whole', async () => {
    patchCluster({ backup: { schedule: '0 3 * * *', storage: '1Gi' } });
    await eventually('the backup CronJob', () => getJson(['get', 'cronjob', '-n', ns]).items[0], 120_000, 1000);
    await runCronJobNow(ns, 'my-etcd-cluster-backup', 'snapshot-now');
    const claim = { name: 'my-etcd-cluster-backups', mountPath: '/backups' };
    // The etcd image has no shell: busybox names the snapshot, etcdutl in the etcd image reads it.
    const listed = await commandInPod(ns, { image: 'busybox', command: ['ls', '/backups'], claim });
    const snapshots = listed.split('\n').filter((f) => /^my-etcd-cluster-\d{8}T\d{6}Z\.db$/.test(f));
    expect(snapshots).toHaveLength(1);
    const version = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status.version as string;
    const status = await commandInPod(ns, {
      image: `quay.io/coreos/etcd:v${version}`,
      command: ['etcdutl', 'snapshot', 'status', `/backups/${snapshots[0]!}`, '--write-out=json'],
      claim,
    });
    // A whole snapshot: etcdutl opens it as etcd's database (a torn file fails) and counts its keys.
    const summary = JSON.parse(status.trim().split('\n').pop()!) as { revision: number; totalKey: number };
    expect(summary.revision).toBeGreaterThan(0);
    expect(summary.totalKey).toBeGreaterThanOrEqual(1);
  });
});
