/**
 * The seed's web and database samples (dist/samples/), applied verbatim on the real node with the
 * operators `kubectl apply -f dist/` installs running as Pods: nginx serving its page through the
 * Service and, by the node's ingress controller (Traefik), through the Ingress; PostgreSQL keeping
 * a row and the backup Job writing a dump that loads.
 */
import * as http from 'node:http';
import * as path from 'node:path';
import * as fs from 'node:fs';
import { helm, helmBinary } from '../support/helm';
import { createTestNamespace, eventually, getJson, kubectl, kubectlOk, testKubeconfig } from '../support/kube';
import { tempDir } from '../support/temp-dir';
import { commandInPod, databaseWriter, psqlAs, refusedFor, runCronJobNow } from '../support/pod-script';

const ROOT = path.resolve(__dirname, '..', '..');
const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(300_000);

if (skip) test.todo(`the web and database seed samples on a real node — skipped: ${skip}`);

(skip ? describe.skip : describe)('the web and database seed samples on a real node', () => {
  let ns: string;

  beforeAll(() => {
    ns = createTestNamespace('e2e-web-db');
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
    kubectl(['delete', 'ingressclass', 'nginx', '--ignore-not-found']);
  });

  const sample = (file: string) => path.join(ROOT, 'dist', 'samples', file);

  /** Every replica of `deployment` available, or the pods' last states when they do not come. */
  const allAvailable = (deployment: string, replicas: number) =>
    eventually(
      `${String(replicas)} available replicas of ${deployment}`,
      () => {
        const d = getJson(['get', 'deployment', deployment, '-n', ns]);
        return d.status?.availableReplicas === replicas ? d : undefined;
      },
      180_000,
      1000,
      () => kubectl(['get', 'pods', '-n', ns, '-o', 'wide']).stdout + podLogs(ns, deployment),
    );

  /**
   * The page the node's ingress controller serves for `host` (as a client sends it, in the Host
   * header); throws with why when the node has no ingress controller.
   */
  const throughIngress = (host: string) =>
    eventually(
      `${host} served through the Ingress`,
      async () => {
        const url = process.env.OPKIT_E2E_INGRESS_URL;
        if (!url) throw new Error(`no ingress controller on the node: ${process.env.OPKIT_E2E_INGRESS_MISSING ?? ''}`);
        const page = await httpGet(url, host);
        return page.status === 200 ? page.body : undefined;
      },
      60_000,
      500,
    );

  /** busybox's wget from a pod of the namespace: the page at `url`. */
  const fetchPage = (url: string) => commandInPod(ns, { image: 'busybox', command: ['wget', '-q', '-O', '-', url] });

  test("WebApp: the seed's sample (nginx:alpine on port 80, 3 replicas) serves nginx's page through its Service and its Ingress", async () => {
    kubectlOk(['rollout', 'status', 'deployment/webapp-operator', '-n', 'webapp-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', sample('webapp-sample.k8s.yaml')]);
    await allAvailable('my-webapp', 3);
    const page = await fetchPage(`http://my-webapp.${ns}.svc/`);
    expect(page).toContain('<h1>Welcome to nginx!</h1>');
    // And through its Ingress (no class: the node's ingress controller serves it), by its domain.
    expect(await throughIngress('example.com')).toContain('<h1>Welcome to nginx!</h1>');
    const webapp = getJson(['get', 'webapp', 'my-webapp', '-n', ns]);
    expect(webapp.status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({ status: 'True' });
    expect(webapp.status.availableReplicas).toBe(3);
  });

  test("Application: seed 002's sample serves nginx's page on its Service's port 8080 and through its nginx-class Ingress", async () => {
    kubectlOk(['apply', '-n', ns, '-f', sample('application-sample.k8s.yaml')]);
    await allAvailable('application-sample', 1);
    const page = await fetchPage(`http://application-sample.${ns}.svc:8080/`);
    expect(page).toContain('<h1>Welcome to nginx!</h1>');
    // The seed's Ingress names class nginx: here that class is served by the node's Traefik.
    kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IngressClass',
        metadata: { name: 'nginx' },
        spec: { controller: 'traefik.io/ingress-controller' },
      }),
    });
    expect(await throughIngress('example.foo.com')).toContain('<h1>Welcome to nginx!</h1>');
  });

  /** psql as the Database's user, through its Service, on its database. */
  const psql = (...sql: string[]) => psqlAs(ns, 'my-db', ...sql);

  test("Database: the seed's sample runs PostgreSQL, Ready through its probes, and keeps a row written through its Service", async () => {
    kubectlOk(['rollout', 'status', 'deployment/database-operator', '-n', 'database-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', sample('database-sample.k8s.yaml')]);
    const db = await eventually(
      'the Database available',
      () => {
        const d = getJson(['get', 'database', 'my-db', '-n', ns]);
        return d.status?.conditions?.some((c: any) => c.type === 'Available' && c.status === 'True') ? d : undefined;
      },
      240_000,
      1000,
      () => kubectl(['get', 'pods,pvc', '-n', ns, '-o', 'wide']).stdout + podLogs(ns, 'my-db'),
    );
    expect(db.status.phase).toBe('Ready');
    const pod = getJson(['get', 'pod', 'my-db-0', '-n', ns]);
    expect(pod.status.containerStatuses[0]).toMatchObject({ ready: true, restartCount: 0 });
    expect(getJson(['get', 'pvc', 'data-my-db-0', '-n', ns]).status.phase).toBe('Bound');
    await psql('CREATE TABLE seeds (id int PRIMARY KEY, note text)', "INSERT INTO seeds VALUES (1, 'kept')");
    expect((await psql('SELECT note FROM seeds WHERE id = 1')).trim()).toBe('kept');
  });

  test('Database: its application role owns its database and nothing more — no superuser, replication, role or database making; the superuser cannot log in over the network', async () => {
    const rights = await psql(
      'SELECT rolsuper, rolreplication, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user',
      'SELECT pg_get_userbyid(datdba) = current_user FROM pg_database WHERE datname = current_database()',
    );
    expect(rights.trim().split('\n')).toEqual(['f|f|f|f', 't']);
    // With the application's password or any other: postgres has none a network login can match.
    const superuser = await commandInPod(ns, {
      image: 'postgres:13',
      uid: 999,
      command: ['sh', '-c', 'psql -At -h my-db -U postgres -d postgres -c "SELECT 1" 2>&1'],
      env: { PGPASSWORD: { secret: 'my-db-credentials', key: 'password' }, PGCONNECT_TIMEOUT: '10' },
      failureIsAnAnswer: true,
    });
    expect(superuser).toContain('password authentication failed for user "postgres"');
  });

  test('Database: TLS by default — psql verify-full through its Service by its names with the CA in <name>-tls, a name not in the certificate refused; tls.required refuses plaintext', async () => {
    expect(getJson(['get', 'database', 'my-db', '-n', ns]).status.tlsSecret).toBe('my-db-tls');
    /** psql as the application role to `host`, `sslmode`, trusting the CA of my-db-tls: whether TLS carried it, and which. */
    const connect = (host: string, sslmode: string) =>
      commandInPod(ns, {
        image: 'postgres:13',
        uid: 999,
        command: [
          'sh',
          '-c',
          `psql -At -h ${host} -U "$PGUSER" -d "$PGDATABASE" -c "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()" 2>&1`,
        ],
        env: {
          PGUSER: { secret: 'my-db-credentials', key: 'username' },
          PGPASSWORD: { secret: 'my-db-credentials', key: 'password' },
          PGDATABASE: { secret: 'my-db-credentials', key: 'database' },
          PGSSLMODE: sslmode,
          PGSSLROOTCERT: '/tls/ca.crt',
          PGCONNECT_TIMEOUT: '10',
        },
        secret: { name: 'my-db-tls', mountPath: '/tls' },
        failureIsAnAnswer: true,
      });
    for (const host of ['my-db', `my-db.${ns}.svc`])
      expect(await connect(host, 'verify-full')).toMatch(/^t\|TLSv1\.[23]$/m);
    // Verified, not merely encrypted: the Service's address is no name in the certificate.
    const address = getJson(['get', 'service', 'my-db', '-n', ns]).spec.clusterIP as string;
    expect(await connect(address, 'verify-full')).toContain('does not match host name');
    // Not required yet: a client that asks for no TLS still gets in.
    expect((await connect('my-db', 'disable')).trim()).toBe('f|');
    const server = getJson(['get', 'pod', 'my-db-0', '-n', ns]).metadata.uid as string;
    kubectlOk([
      'patch',
      'database',
      'my-db',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { tls: { required: true } } }),
    ]);
    const refused = await eventually(
      'plaintext refused once TLS is required',
      async () => {
        const pod = getJson(['get', 'pod', 'my-db-0', '-n', ns]);
        if (pod.metadata.uid === server || !pod.status?.containerStatuses?.[0]?.ready) return undefined;
        const answer = await connect('my-db', 'disable');
        return answer.includes('no pg_hba.conf entry') ? answer : undefined;
      },
      120_000,
      1000,
    );
    expect(refused).toContain('no encryption');
    expect(await connect('my-db', 'verify-full')).toMatch(/^t\|TLSv1\.[23]$/m);
    // The rows are where they were, read over TLS (psql's default sslmode prefers it).
    expect((await psql('SELECT note FROM seeds WHERE id = 1')).trim()).toBe('kept');
  });

  test('Database: its server pod deleted, writes through its Service are refused for under 5 s, with a Warning Event when it goes and a Normal one when it is back', async () => {
    await psql('CREATE TABLE beats (at timestamptz NOT NULL, n int)');
    const writer = databaseWriter(ns, 'my-db', 'host=my-db');
    await eventually(
      'the writer writing',
      async () => (Number((await psql('SELECT count(*) FROM beats')).trim()) >= 3 ? true : undefined),
      60_000,
      500,
    );
    kubectlOk(['delete', 'pod', 'my-db-0', '-n', ns, '--wait=false']);
    // From the last write before the refusals to the first one after them.
    const outage = refusedFor(await writer);
    if (outage === undefined) throw new Error('the writer saw no refusal with writes around it');
    process.stdout.write(`[database restart] writes refused for ${outage.toFixed(1)} s\n`);
    expect(outage).toBeLessThan(5);
    const events = await eventually(
      'ServerUnavailable and ServerAvailable Events',
      () => {
        const reasons = getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=my-db'])
          .items.filter((e: any) => e.involvedObject.kind === 'Database')
          .map((e: any) => `${e.type as string} ${e.reason as string}`);
        return reasons.includes('Warning ServerUnavailable') && reasons.includes('Normal ServerAvailable')
          ? reasons
          : undefined;
      },
      60_000,
      1000,
    );
    expect(events).toEqual(expect.arrayContaining(['Warning ServerUnavailable', 'Normal ServerAvailable']));
    expect((await psql('SELECT note FROM seeds WHERE id = 1')).trim()).toBe('kept');
  });

  test('Database: a Job made from the backup CronJob writes a dump that loads into a new server', async () => {
    await runCronJobNow(ns, 'my-db-backup', 'backup-now');
    const database = kubectlOk(['get', 'secret', 'my-db-credentials', '-n', ns, '-o', 'jsonpath={.data.database}']);
    const name = Buffer.from(database, 'base64').toString();
    // The dump on the backup claim, loaded into a new database and read back there.
    const restored = await commandInPod(ns, {
      image: 'postgres:13',
      uid: 999,
      claim: { name: 'my-db-backup', mountPath: '/backup' },
      scratch: '/tmp',
      command: [
        'sh',
        '-c',
        [
          'set -e',
          'ls /backup',
          'dump=$(ls /backup/my-db-*.sql | tail -n 1)',
          // A server of its own in the pod: the application role may make no database.
          'initdb -D /tmp/scratch -U "$PGUSER" --auth=trust > /dev/null',
          'pg_ctl -D /tmp/scratch -o "-c listen_addresses= -c unix_socket_directories=/tmp" -w start > /dev/null',
          'createdb -h /tmp -U "$PGUSER" scratch',
          'psql -q -v ON_ERROR_STOP=1 -h /tmp -U "$PGUSER" -d scratch -f "$dump" > /dev/null',
          'echo "note: $(psql -At -h /tmp -U "$PGUSER" -d scratch -c "SELECT note FROM seeds WHERE id = 1")"',
        ].join('; '),
      ],
      env: { PGUSER: { secret: 'my-db-credentials', key: 'username' } },
    });
    expect(restored).toMatch(/^my-db-\d{8}T\d{6}Z\.sql$/m);
    expect(restored).toContain('note: kept');
    expect(name).not.toBe('scratch');
  });

  test('Database: a version whose image cannot be pulled stalls its server; set back, the stuck pod is replaced by the operator (none by hand) and the row is still there', async () => {
    const condition = (type: string) =>
      getJson(['get', 'database', 'my-db', '-n', ns]).status?.conditions?.find((c: any) => c.type === type);
    const patch = (version: string) =>
      kubectlOk(['patch', 'database', 'my-db', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { version } })]);
    // The node holds postgres:13 only: postgres:16 cannot be pulled.
    patch('16');
    const stuck = await eventually(
      'Degraded=True, the server pod unable to pull its image',
      () => {
        const d = condition('Degraded');
        return d?.status === 'True' && /ErrImagePull|ImagePullBackOff/.test(d.message) ? d : undefined;
      },
      180_000,
      1000,
    );
    expect(stuck.message).toContain('my-db-0');
    const broken = getJson(['get', 'pod', 'my-db-0', '-n', ns]);
    expect(broken.spec.containers[0].image).toBe('postgres:16');
    // Fixed: a StatefulSet of OrderedReady pods would wait for that pod to be Ready, forever.
    patch('13');
    await eventually(
      'Available again, Degraded=False',
      () => (condition('Available')?.status === 'True' && condition('Degraded')?.status === 'False' ? true : undefined),
      180_000,
      1000,
      () => kubectl(['get', 'pods', '-n', ns, '-o', 'wide']).stdout,
    );
    const server = getJson(['get', 'pod', 'my-db-0', '-n', ns]);
    expect(server.metadata.uid).not.toBe(broken.metadata.uid);
    expect(server.spec.containers[0].image).toBe('postgres:13');
    const replaced = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
      (e: any) => e.regarding?.name === 'my-db' && e.reason === 'StuckPodReplaced',
    );
    expect(replaced.map((e: any) => e.note)).toEqual([
      expect.stringMatching(/^Deleted pod my-db-0, stuck on revision my-db-/),
    ]);
    expect((await psql('SELECT note FROM seeds WHERE id = 1')).trim()).toBe('kept');
    process.stdout.write(`stuck rollout: ${replaced[0].note as string}\n`);
  });

  test('Database: type mysql runs for real (a MySQL-compatible server, as the sample images say): Available through its probes, a row written through its Service as the generated user, whose rights end at its database; a dump by the backup Job loads back', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'shop-mysql' },
        spec: {
          type: 'mysql',
          version: '8.4',
          storage: { size: '1Gi' },
          backup: { enabled: true, schedule: '0 3 * * *' },
        },
      }),
    });
    await eventually(
      'the mysql Database available',
      () =>
        getJson(['get', 'database', 'shop-mysql', '-n', ns]).status?.conditions?.some(
          (c: any) => c.type === 'Available' && c.status === 'True',
        )
          ? true
          : undefined,
      240_000,
      1000,
      () => kubectl(['get', 'pods,pvc', '-n', ns, '-o', 'wide']).stdout + podLogs(ns, 'shop-mysql'),
    );
    /** The mysql client in the server's image as the Database's user, through its Service, on its database. */
    const mysql = (script: string, claim?: { name: string; mountPath: string }) =>
      commandInPod(ns, {
        image: 'mysql:8.4',
        uid: 999,
        command: ['sh', '-c', script],
        env: {
          MYSQL_USER: { secret: 'shop-mysql-credentials', key: 'username' },
          MYSQL_PWD: { secret: 'shop-mysql-credentials', key: 'password' },
          MYSQL_DATABASE: { secret: 'shop-mysql-credentials', key: 'database' },
        },
        claim,
      });
    const client = 'mysql -N -B -h shop-mysql -u"$MYSQL_USER" "$MYSQL_DATABASE"';
    await mysql(
      `${client} -e "CREATE TABLE seeds (id int PRIMARY KEY, note text); INSERT INTO seeds VALUES (1, 'kept')"`,
    );
    expect((await mysql(`${client} -e "SELECT note FROM seeds WHERE id = 1"`)).trim()).toBe('kept');
    // Every right on its own database, none beyond it.
    const grants = (await mysql(`${client} -e "SHOW GRANTS"`)).trim().split('\n');
    expect(grants).toHaveLength(2);
    expect(grants[0]).toMatch(/^GRANT USAGE ON \*\.\* TO [`']app[`']@[`']%[`']/);
    expect(grants[1]).toMatch(/^GRANT ALL PRIVILEGES ON `shop_mysql`\.\* TO [`']app[`']@[`']%[`']$/);
    await runCronJobNow(ns, 'shop-mysql-backup', 'mysql-dump-now');
    // The table dropped, the newest dump loaded back into the database by its user, the row read.
    const restored = await mysql(
      [
        'set -e',
        `${client} -e "DROP TABLE seeds"`,
        'dump=$(ls /backup/shop-mysql-*.sql | tail -n 1)',
        'echo "$(basename "$dump")"',
        `${client} < "$dump"`,
        `${client} -e "SELECT note FROM seeds WHERE id = 1"`,
      ].join('; '),
      { name: 'shop-mysql-backup', mountPath: '/backup' },
    );
    expect(restored).toMatch(/^shop-mysql-\d{8}T\d{6}Z\.sql\nkept$/m);
    const status = await eventually(
      'the dump in status.backups',
      () => {
        const s = getJson(['get', 'database', 'shop-mysql', '-n', ns]).status;
        return s?.backups?.length === 1 ? s : undefined;
      },
      60_000,
      1000,
    );
    expect(status.backups[0].name).toMatch(/^shop-mysql-\d{8}T\d{6}Z\.sql$/);
    expect(status.phase).toBe('Ready');
  });

  test('a Database in a Helm release: `helm upgrade --wait` to an image that cannot be pulled fails; set back, `helm upgrade --wait` succeeds, the stuck pod replaced by the operator', () => {
    const { missing } = helmBinary();
    if (missing) throw new Error(`no helm to drive the release: ${missing}`);
    const chart = tempDir('opkit-db-release-');
    fs.writeFileSync(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: db-release\nversion: 0.1.0\n');
    fs.mkdirSync(path.join(chart, 'templates'));
    fs.writeFileSync(
      path.join(chart, 'templates', 'database.yaml'),
      [
        'apiVersion: database.example.com/v1alpha1',
        'kind: Database',
        'metadata:',
        '  name: released-db',
        'spec:',
        '  type: postgresql',
        '  version: {{ .Values.version | quote }}',
        '  storage:',
        '    size: 1Gi',
        '',
      ].join('\n'),
    );
    const release = (verb: 'install' | 'upgrade', version: string, timeout: string) => {
      const args = [
        verb,
        'released-db',
        chart,
        '-n',
        ns,
        '--set',
        `version=${version}`,
        '--wait',
        '--timeout',
        timeout,
      ];
      const started = Date.now();
      const r = helm(args, { kubeconfig: testKubeconfig() });
      process.stdout.write(
        `helm ${verb} --set version=${version} --wait: exit ${r.code} after ${((Date.now() - started) / 1000).toFixed(1)} s${r.code ? `: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}\n`,
      );
      return r;
    };
    expect(release('install', '13', '240s')).toMatchObject({ code: 0 });
    const healthy = getJson(['get', 'pod', 'released-db-0', '-n', ns]);

    // The node holds postgres:13 only: helm sees the Database fail (kstatus Failed), not a timeout.
    const broken = release('upgrade', '16', '240s');
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toMatch(/released-db/);
    const stuck = getJson(['get', 'pod', 'released-db-0', '-n', ns]);
    expect(stuck.metadata.uid).not.toBe(healthy.metadata.uid);
    expect(stuck.spec.containers[0].image).toBe('postgres:16');

    // Set back in the release: the wait succeeds, though a StatefulSet of OrderedReady pods would
    // wait for the stuck pod forever; the operator replaced it.
    expect(release('upgrade', '13', '240s')).toMatchObject({ code: 0 });
    const server = getJson(['get', 'pod', 'released-db-0', '-n', ns]);
    expect(server.spec.containers[0].image).toBe('postgres:13');
    const replaced = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
      (e: any) => e.regarding?.name === 'released-db' && e.reason === 'StuckPodReplaced',
    );
    expect(replaced.map((e: any) => e.note)).toEqual([
      expect.stringMatching(/^Deleted pod released-db-0, stuck on revision released-db-/),
    ]);
    expect(helm(['uninstall', 'released-db', '-n', ns, '--wait'], { kubeconfig: testKubeconfig() })).toMatchObject({
      code: 0,
    });
  });
});

/** The last lines of each container of the pods whose names start with `prefix`, for a failure's message. */
function podLogs(namespace: string, prefix: string): string {
  const pods = getJson(['get', 'pods', '-n', namespace]).items.filter((p: any) =>
    (p.metadata.name as string).startsWith(prefix),
  );
  return pods
    .map((p: any) => {
      const name = p.metadata.name as string;
      const log = kubectl(['logs', name, '-n', namespace, '--tail=20']);
      const previous = kubectl(['logs', name, '-n', namespace, '--tail=20', '--previous']);
      return `\n--- ${name}\n${log.stdout}${log.stderr}${previous.stdout}`;
    })
    .join('');
}

/** GET `/` from `url` with `host` as the Host header: status and body. */
function httpGet(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/`, { headers: { Host: host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    request.on('error', reject);
  });
}
