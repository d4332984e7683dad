/**
 * Programs run inside pods on the e2e tier's real node, under the restricted profile: a command
 * in any image the node holds, or a Node.js script in the reconciler image (the one image with a
 * language runtime), as a ServiceAccount of the test's.
 */
import { eventually, getJson, getJsonIfExists, kubectl, kubectlOk } from './kube';

export interface PodCommand {
  readonly image: string;
  readonly command: readonly string[];
  /** @default 65532 */
  readonly uid?: number;
  /** @default the namespace's default ServiceAccount */
  readonly serviceAccount?: string;
  /** Environment: a value, or `{ secret, key }` for a Secret's key. */
  readonly env?: Readonly<Record<string, string | { readonly secret: string; readonly key: string }>>;
  /** A claim mounted at `mountPath`. */
  readonly claim?: { readonly name: string; readonly mountPath: string };
  /** A Secret mounted read-only at `mountPath`. */
  readonly secret?: { readonly name: string; readonly mountPath: string };
  /** An empty directory mounted at this path, writable under the read-only root (e.g. /tmp). */
  readonly scratch?: string;
  /** Resolve with the output of a command that failed too, rather than throw. @default false */
  readonly failureIsAnAnswer?: boolean;
}

/**
 * Runs `command` in a pod of `namespace` and resolves with what it printed once it ended; throws
 * with that output when it failed (unless `failureIsAnAnswer`).
 */
export async function commandInPod(namespace: string, run: PodCommand): Promise<string> {
  const { claim, secret } = run;
  const name = `run-${Math.random().toString(36).slice(2, 8)}`;
  const uid = run.uid ?? 65532;
  const env = Object.entries(run.env ?? {}).map(([key, value]) =>
    typeof value === 'string'
      ? { name: key, value }
      : { name: key, valueFrom: { secretKeyRef: { name: value.secret, key: value.key } } },
  );
  kubectlOk(['apply', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        serviceAccountName: run.serviceAccount,
        restartPolicy: 'Never',
        securityContext: {
          runAsNonRoot: true,
          runAsUser: uid,
          runAsGroup: uid,
          fsGroup: uid,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumes: [
          ...(claim ? [{ name: 'data', persistentVolumeClaim: { claimName: claim.name } }] : []),
          ...(secret ? [{ name: 'secret', secret: { secretName: secret.name, defaultMode: 0o440 } }] : []),
          ...(run.scratch ? [{ name: 'scratch', emptyDir: {} }] : []),
        ],
        containers: [
          {
            name: 'run',
            image: run.image,
            imagePullPolicy: 'IfNotPresent',
            command: run.command,
            env,
            volumeMounts: [
              ...(claim ? [{ name: 'data', mountPath: claim.mountPath }] : []),
              ...(secret ? [{ name: 'secret', mountPath: secret.mountPath, readOnly: true }] : []),
              ...(run.scratch ? [{ name: 'scratch', mountPath: run.scratch }] : []),
            ],
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
              readOnlyRootFilesystem: true,
            },
          },
        ],
      },
    }),
  });
  const phase = await eventually(
    `pod ${name} ended`,
    () => {
      const p = getJsonIfExists(['get', 'pod', name, '-n', namespace])?.status?.phase;
      return p === 'Succeeded' || p === 'Failed' ? (p as string) : undefined;
    },
    120_000,
  );
  const output = kubectlOk(['logs', name, '-n', namespace]);
  if (phase === 'Failed' && !run.failureIsAnAnswer)
    throw new Error(`${run.command.join(' ')} failed in pod ${name}:\n${output}`);
  return output;
}

/**
 * JavaScript for a Node.js script in a pod, defining `admitted()`: it resolves once a TCP connection
 * to `host`:`port` goes through (at most after 60 s, then the script's own tries tell). On a node
 * whose NetworkPolicy enforcer learns a new pod's address from the pod's status, after the pod has
 * started (kube-router), a pod a policy admits is rejected as any unknown pod until then, so a
 * script that must be admitted waits for that before its real work.
 */
export function admittedScript(host: string, port: number): string {
  return `
    const connects = () => new Promise((resolve) => {
      const s = require('node:net').connect(${String(port)}, '${host}');
      s.on('connect', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    const admitted = async () => {
      for (const until = Date.now() + 60000; Date.now() < until; await new Promise((r) => setTimeout(r, 500)))
        if (await connects()) return;
    };`;
}

/** The reconciler image, as the memcached operator's Deployment runs it: the one image with Node.js. */
export function reconcilerImage(): string {
  return getJson(['get', 'deployment', 'memcached-operator', '-n', 'memcached-system']).spec.template.spec.containers[0]
    .image as string;
}

/**
 * Runs a Node.js script in a pod of `namespace` as ServiceAccount `serviceAccount` (the reconciler
 * image has Node.js), and resolves with what it printed once it ended. With `claim`, that claim is
 * mounted at its `mountPath`.
 */
export async function nodeScriptInPod(
  namespace: string,
  serviceAccount: string,
  script: string,
  options: { readonly claim?: { readonly name: string; readonly mountPath: string } } = {},
): Promise<string> {
  return commandInPod(namespace, {
    image: reconcilerImage(),
    command: ['/usr/local/bin/node', '-e', script],
    serviceAccount,
    claim: options.claim,
    failureIsAnAnswer: true,
  });
}

/**
 * A Job made now from CronJob `cronJob` (`kubectl create job --from`), as a user runs a scheduled
 * backup by hand; resolves once it has succeeded, or fails with its containers' logs.
 */
export async function runCronJobNow(namespace: string, cronJob: string, job: string): Promise<void> {
  kubectlOk(['create', 'job', job, '-n', namespace, `--from=cronjob/${cronJob}`]);
  await eventually(
    `Job ${job} (from CronJob ${cronJob}) to succeed`,
    () => (getJson(['get', 'job', job, '-n', namespace]).status?.succeeded >= 1 ? true : undefined),
    180_000,
    1000,
    () => kubectl(['logs', `job/${job}`, '-n', namespace, '--all-containers']).stdout,
  );
}

/**
 * psql in the postgres image as Database `db`'s user (its credentials Secret), through its
 * Service, on its database: the output of `sql`, each statement run in turn, unaligned.
 */
export function psqlAs(namespace: string, db: string, ...sql: string[]): Promise<string> {
  return psqlThrough(namespace, db, db, ...sql);
}

/** `psqlAs` through another of the Database's Services, e.g. `<db>-ro`. */
export function psqlThrough(namespace: string, db: string, service: string, ...sql: string[]): Promise<string> {
  return commandInPod(namespace, {
    image: 'postgres:13',
    uid: 999,
    command: [
      'sh',
      '-c',
      `psql -v ON_ERROR_STOP=1 -At -h ${service} -U "$PGUSER" -d "$PGDATABASE" ${sql.map((s) => `-c "${s}"`).join(' ')}`,
    ],
    env: {
      PGUSER: { secret: `${db}-credentials`, key: 'username' },
      PGPASSWORD: { secret: `${db}-credentials`, key: 'password' },
      PGDATABASE: { secret: `${db}-credentials`, key: 'database' },
    },
  });
}

/**
 * etcdctl in a pod of its own (the etcd image of `version`), as a client of EtcdCluster `cluster`
 * holding its client certificate (`<cluster>-client-tls`): through the client Service, over TLS.
 */
export function etcdctlWithCertificate(
  namespace: string,
  cluster: string,
  version: string,
  ...args: string[]
): Promise<string> {
  return commandInPod(namespace, {
    image: `quay.io/coreos/etcd:v${version}`,
    command: [
      'etcdctl',
      `--endpoints=https://${cluster}-client:2379`,
      '--cacert=/tls/ca.crt',
      '--cert=/tls/tls.crt',
      '--key=/tls/tls.key',
      '--dial-timeout=10s',
      ...args,
    ],
    secret: { name: `${cluster}-client-tls`, mountPath: '/tls' },
  });
}

/** One insert of `databaseWriter`: its number, acknowledged or refused, and when it began (seconds). */
export interface Beat {
  readonly n: number;
  readonly ok: boolean;
  readonly at: number;
}

/**
 * A writer into Database `db`'s table `beats (at timestamptz, n int)` (made by the caller) through
 * `conninfo` as its application role: an insert numbered n every 0.2 s, each a new connection as
 * a client after a failure makes, given up after 6 s (a server that hangs holds it no longer);
 * it ends 5 s of writes after its first refusal (or after 100 s). Resolves with each insert's
 * outcome.
 */
export async function databaseWriter(namespace: string, db: string, conninfo: string): Promise<Beat[]> {
  const out = await commandInPod(namespace, {
    image: 'postgres:13',
    uid: 999,
    command: [
      'sh',
      '-c',
      [
        'start=$(date +%s); refused=; oks=0; n=0',
        'while [ $(( $(date +%s) - start )) -lt 100 ]; do',
        '  t=$(date +%s.%N); n=$((n + 1))',
        `  if timeout 6 psql -q "${conninfo}" -c "INSERT INTO beats VALUES (now(), $n)" > /dev/null 2>&1; then`,
        '    echo "ok $t $n"; if [ -n "$refused" ]; then oks=$((oks + 1)); [ $oks -lt 25 ] || break; fi',
        '  else echo "no $t $n"; refused=1; oks=0; fi',
        '  sleep 0.2',
        'done',
      ].join('\n'),
    ],
    env: {
      PGUSER: { secret: `${db}-credentials`, key: 'username' },
      PGPASSWORD: { secret: `${db}-credentials`, key: 'password' },
      PGDATABASE: { secret: `${db}-credentials`, key: 'database' },
      PGCONNECT_TIMEOUT: '2',
    },
  });
  return out
    .trim()
    .split('\n')
    .map((line) => {
      const [verdict, at, n] = line.split(' ');
      return { n: Number(n), ok: verdict === 'ok', at: Number(at) };
    });
}

/**
 * How long writes were refused: from the last acknowledged before the first refusal to the first
 * acknowledged after the last one (undefined when the beats hold no refusal with writes around it).
 */
export function refusedFor(beats: readonly Beat[]): number | undefined {
  const firstRefused = beats.findIndex((b) => !b.ok);
  const lastRefused = beats.length - 1 - [...beats].reverse().findIndex((b) => !b.ok);
  const before = beats[firstRefused - 1];
  const after = beats[lastRefused + 1];
  return firstRefused > 0 && before && after ? after.at - before.at : undefined;
}
