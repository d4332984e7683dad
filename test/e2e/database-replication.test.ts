/**
 * A replicated Database on the real node, as `kubectl apply -f dist/` installs its operator: three
 * PostgreSQL instances — a primary and two standbys cloned from it and streaming — rows written
 * through `<name>-rw` read back through `<name>-ro`; then the primary's disk lost (its claim and pod
 * deleted): the instance made again on an empty claim refuses to start an empty database, the
 * most advanced standby is promoted after failoverDelay, `<name>-rw` takes writes again with every
 * row kept, and the lost instance comes back as a standby cloned from the new primary; then the
 * primary's container frozen under a writer — with a synchronous standby, no acknowledged write
 * lost — and rejoining once it runs again; then a switchover by the annotation, under a writer.
 */
import { execFileSync } from 'node:child_process';
import { createTestNamespace, eventually, getJson, kubectl, kubectlOk } from '../support/kube';
import { commandInPod, databaseWriter, refusedFor } from '../support/pod-script';

const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(600_000);

if (skip) test.todo(`a replicated Database on a real node — skipped: ${skip}`);

interface Instance {
  name: string;
  role: string;
  ready?: boolean;
  lsn?: string;
  lagBytes?: number;
  timeline?: number;
}

(skip ? describe.skip : describe)('a replicated Database on a real node', () => {
  let ns: string;
  const db = 'orders';

  beforeAll(() => {
    kubectlOk(['rollout', 'status', 'deployment/database-operator', '-n', 'database-system', '--timeout=120s']);
    ns = createTestNamespace('e2e-db-ha');
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  const database = () => getJson(['get', 'database', db, '-n', ns]);
  const instances = (): Instance[] => database().status?.instances ?? [];
  /** The operator's log and the instances' pods, for a failure's message. */
  const explain = () =>
    [
      kubectl(['get', 'pods', '-n', ns, '-o', 'wide', '--show-labels']).stdout,
      JSON.stringify(database().status, null, 1),
      kubectl(['logs', '-n', 'database-system', 'deployment/database-operator', '--tail=40']).stdout,
      ...[0, 1, 2].map((i) => kubectl(['logs', '-n', ns, `${db}-${String(i)}`, '--tail=15']).stdout),
    ].join('\n');
  /** psql as the application's role through `service`, over TLS with the Database's CA: its output. */
  const psql = (service: string, sql: string, failureIsAnAnswer = false) =>
    commandInPod(ns, {
      image: 'postgres:13',
      uid: 999,
      command: [
        'sh',
        '-c',
        `psql -v ON_ERROR_STOP=1 -At "host=${service} sslmode=verify-full sslrootcert=/tls/ca.crt connect_timeout=3" -c "${sql}"`,
      ],
      env: {
        PGUSER: { secret: `${db}-credentials`, key: 'username' },
        PGPASSWORD: { secret: `${db}-credentials`, key: 'password' },
        PGDATABASE: { secret: `${db}-credentials`, key: 'database' },
      },
      secret: { name: `${db}-tls`, mountPath: '/tls' },
      failureIsAnAnswer,
    });
  /** The instances once one is the primary and the others standbys, each ready. */
  const replicated = (what: string, primary?: string) =>
    eventually(
      what,
      () => {
        const list = instances();
        const standbys = list.filter((i) => i.role === 'standby' && i.ready);
        const first = list.find((i) => i.role === 'primary' && i.ready);
        return first && (!primary || first.name === primary) && standbys.length === 2 ? list : undefined;
      },
      300_000,
      2000,
      explain,
    );

  test('three instances: a primary and two streaming standbys; rows written through <name>-rw are read through <name>-ro, which only standbys serve', async () => {
    const started = Date.now();
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: db },
        spec: {
          type: 'postgresql',
          version: '13',
          storage: { size: '1Gi' },
          instances: 3,
          failoverDelay: 10,
          synchronousStandbys: 1,
        },
      }),
    });
    const list = await replicated('a primary and two ready standbys');
    process.stdout.write(
      `[database replication] 3 instances (${list.map((i) => `${i.name} ${i.role}`).join(', ')}) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    expect(database().status.primary).toBe(`${db}-0`);
    expect(
      kubectl(['get', 'pods', '-n', ns, '-l', 'database.example.com/role=standby', '-o', 'name'])
        .stdout.trim()
        .split('\n')
        .sort(),
    ).toEqual([`pod/${db}-1`, `pod/${db}-2`]);
    await psql(
      `${db}-rw`,
      'CREATE TABLE orders (id int PRIMARY KEY, note text); INSERT INTO orders SELECT g, g::text FROM generate_series(1, 100) g',
    );
    const read = await eventually(
      'the rows on a standby',
      async () => {
        const out = (await psql(`${db}-ro`, 'SELECT pg_is_in_recovery(), count(*) FROM orders', true)).trim();
        return out === 't|100' ? out : undefined;
      },
      60_000,
      1000,
      explain,
    );
    expect(read).toBe('t|100');
    // A write through <name>-ro is refused: a standby is read-only.
    expect(await psql(`${db}-ro`, 'INSERT INTO orders VALUES (0, null)', true)).toContain('read-only transaction');
  });

  test("the primary's disk lost: its empty instance refuses to start empty, a standby is promoted after failoverDelay, <name>-rw takes writes with every row kept, and the lost one rejoins as a standby", async () => {
    const lost = `${db}-0`;
    // The claim goes once its pod does; the StatefulSet makes both again, the claim empty.
    kubectlOk(['delete', 'pvc', `data-${lost}`, '-n', ns, '--wait=false']);
    const deleted = Date.now();
    kubectlOk(['delete', 'pod', lost, '-n', ns, '--wait=false']);
    const promoted = await eventually(
      'a standby promoted',
      () => {
        const primary = database().status?.primary;
        return primary && primary !== lost ? primary : undefined;
      },
      120_000,
      500,
      explain,
    );
    const failedOverAfter = (Date.now() - deleted) / 1000;
    const writable = await eventually(
      'writes through <name>-rw again',
      async () => {
        const out = (await psql(`${db}-rw`, 'INSERT INTO orders VALUES (101, null) RETURNING id', true)).trim();
        return out.startsWith('101') ? out : undefined;
      },
      60_000,
      500,
      explain,
    );
    const writesAfter = (Date.now() - deleted) / 1000;
    process.stdout.write(
      `[database failover] ${promoted} promoted ${failedOverAfter.toFixed(1)} s after the primary's claim and pod were deleted (failoverDelay 10 s); writes through ${db}-rw ${writesAfter.toFixed(1)} s after\n`,
    );
    expect(writable).toContain('101');
    expect(failedOverAfter).toBeLessThan(10 + 30);
    expect((await psql(`${db}-rw`, 'SELECT count(*) FROM orders')).trim()).toBe('101');
    // The empty instance said why it would not start, and the promotion has its Event.
    const events = getJson(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${db}`]).items.map(
      (e: any) => `${e.reason as string}: ${e.message as string}`,
    );
    expect(events).toContainEqual(expect.stringMatching(new RegExp(`^FailedOver: Promoted ${promoted} to primary`)));
    const list = await replicated('the lost instance back as a standby', promoted);
    const back = list.find((i) => i.name === lost);
    process.stdout.write(
      `[database failover] ${lost} a standby again ${((Date.now() - deleted) / 1000).toFixed(1)} s after (timeline ${String(back?.timeline)})\n`,
    );
    expect(back).toMatchObject({ role: 'standby', ready: true });
    const onTheLost = await eventually(
      'the rows on every standby',
      async () => {
        const out = (await psql(`${db}-ro`, 'SELECT count(*) FROM orders', true)).trim();
        return out === '101' ? out : undefined;
      },
      60_000,
      1000,
      explain,
    );
    expect(onTheLost).toBe('101');
  });

  test("the primary's container hung (frozen): a standby promoted after failoverDelay, no acknowledged write lost (a synchronous standby), and the hung one, running again, rejoins as a standby", async () => {
    const { ctr, containerdSocket } = JSON.parse(process.env.OPKIT_TEST_REAL_NODE ?? '{}') as {
      containerdSocket?: string;
      ctr?: string;
    };
    if (!ctr || !containerdSocket)
      throw new Error('OPKIT_TEST_REAL_NODE names no containerd to freeze a container with');
    const hung = database().status.primary as string;
    const container = String(getJson(['get', 'pod', hung, '-n', ns]).status.containerStatuses[0].containerID).replace(
      /^containerd:\/\//,
      '',
    );
    // The container's processes frozen (its cgroup's freezer), as a hung node or a stalled disk
    // leaves a server: its port still accepts connections, nothing answers.
    const task = (verb: 'pause' | 'resume') =>
      execFileSync(ctr, ['--address', containerdSocket, '-n', 'k8s.io', 'task', verb, container]);
    await psql(`${db}-rw`, 'DROP TABLE IF EXISTS beats; CREATE TABLE beats (at timestamptz NOT NULL, n int)');
    const writer = databaseWriter(ns, db, `host=${db}-rw sslmode=require`);
    await eventually(
      'the writer writing',
      async () => (Number((await psql(`${db}-rw`, 'SELECT count(*) FROM beats', true)).trim()) >= 3 ? true : undefined),
      60_000,
      500,
    );
    task('pause');
    const frozen = Date.now();
    let beats: Awaited<typeof writer>;
    let promoted: string;
    try {
      promoted = await eventually(
        'a standby promoted',
        () => {
          const primary = database().status?.primary;
          return primary && primary !== hung ? primary : undefined;
        },
        120_000,
        500,
        explain,
      );
      const failedOverAfter = (Date.now() - frozen) / 1000;
      beats = await writer;
      const outage = refusedFor(beats);
      process.stdout.write(
        `[database failover] ${hung} frozen: ${promoted} promoted ${failedOverAfter.toFixed(1)} s after (failoverDelay 10 s); writes through ${db}-rw refused for ${String(outage?.toFixed(1))} s\n`,
      );
      expect(failedOverAfter).toBeLessThan(10 + 30);
      // Writes came back before the writer gave up (if not: its last beats, and the cluster).
      if (outage === undefined)
        throw new Error(`no write acknowledged after the refusals: ${JSON.stringify(beats.slice(-5))}\n${explain()}`);
    } finally {
      task('resume');
    }
    const resumed = Date.now();
    // Every write the writer saw acknowledged is on the new primary.
    const rows = new Set((await psql(`${db}-rw`, 'SELECT n FROM beats')).trim().split('\n').map(Number));
    const acknowledged = beats.filter((b) => b.ok);
    expect(acknowledged.length).toBeGreaterThan(25);
    expect(acknowledged.filter((b) => !rows.has(b.n)).map((b) => b.n)).toEqual([]);
    // Running again as a primary on the former timeline, it is restarted and rewound onto the new one.
    const list = await replicated('the hung instance back as a standby', promoted);
    process.stdout.write(
      `[database failover] ${hung} a standby again ${((Date.now() - resumed) / 1000).toFixed(1)} s after it ran again (timeline ${String(list.find((i) => i.name === hung)?.timeline)})\n`,
    );
    expect(list.find((i) => i.name === hung)).toMatchObject({ role: 'standby', ready: true });
  });

  test('a switchover by the annotation: <name>-rw refuses writes for under 10 s, every acknowledged write is kept, and the former primary rejoins as a standby', async () => {
    const from = database().status.primary as string;
    const to = instances().find((i) => i.role === 'standby' && i.ready)?.name ?? '';
    await psql(`${db}-rw`, 'DROP TABLE IF EXISTS beats; CREATE TABLE beats (at timestamptz NOT NULL, n int)');
    // Each insert a new connection through <name>-rw, as a client after a failure makes.
    const writer = databaseWriter(ns, db, `host=${db}-rw sslmode=require`);
    await eventually(
      'the writer writing',
      async () => (Number((await psql(`${db}-rw`, 'SELECT count(*) FROM beats', true)).trim()) >= 3 ? true : undefined),
      60_000,
      500,
    );
    kubectlOk(['annotate', 'database', db, '-n', ns, `database.example.com/switchover-to=${to}`]);
    const beats = await writer;
    const outage = refusedFor(beats);
    if (outage === undefined) throw new Error('the writer saw no refusal with writes around it');
    process.stdout.write(
      `[database switchover] ${from} to ${to}: writes through ${db}-rw refused for ${outage.toFixed(1)} s\n`,
    );
    expect(outage).toBeLessThan(10);
    expect(database().status).toMatchObject({ primary: to, lastSwitchover: to });
    // Every write the writer saw acknowledged is there. (Not only those: a commit waiting on its
    // synchronous standby when the former primary stopped is kept without its client hearing so.)
    const kept = new Set((await psql(`${db}-rw`, 'SELECT n FROM beats')).trim().split('\n').map(Number));
    const acknowledged = beats.filter((b) => b.ok);
    expect(acknowledged.length).toBeGreaterThan(25);
    expect(acknowledged.filter((b) => !kept.has(b.n)).map((b) => b.n)).toEqual([]);
    const list = await replicated('the former primary back as a standby', to);
    expect(list.find((i) => i.name === from)).toMatchObject({ role: 'standby', ready: true });
    const reasons = getJson(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${db}`]).items.map(
      (e: any) => e.reason as string,
    );
    expect(reasons).toEqual(expect.arrayContaining(['SwitchoverStarted', 'SwitchedOver']));
  });

  test('a change of the pod template rolled standbys first, one at a time, then a switchover: <name>-rw refuses writes for under 10 s, every acknowledged write kept, each instance on the new template', async () => {
    const revisions = () =>
      getJson(['get', 'pods', '-n', ns, '-l', 'statefulset.kubernetes.io/pod-name']).items.map(
        (p: any) => `${p.metadata.name as string} ${p.metadata.labels['controller-revision-hash'] as string}`,
      );
    const before = new Set(revisions());
    const from = database().status.primary as string;
    await psql(`${db}-rw`, 'DROP TABLE IF EXISTS beats; CREATE TABLE beats (at timestamptz NOT NULL, n int)');
    const writer = databaseWriter(ns, db, `host=${db}-rw sslmode=require`);
    await eventually(
      'the writer writing',
      async () => (Number((await psql(`${db}-rw`, 'SELECT count(*) FROM beats', true)).trim()) >= 3 ? true : undefined),
      60_000,
      500,
    );
    const started = Date.now();
    kubectlOk([
      'patch',
      'database',
      db,
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { resources: { requests: { cpu: '150m', memory: '256Mi' }, limits: { memory: '1Gi' } } },
      }),
    ]);
    const beats = await writer;
    const outage = refusedFor(beats);
    const sts = await eventually(
      'every instance on the new template, a primary and two standbys',
      () => {
        // (Under OnDelete the StatefulSet never moves its currentRevision: each pod's label is what tells.)
        const status = getJson(['get', 'statefulset', db, '-n', ns]).status;
        const list = instances();
        const replicated =
          list.filter((i) => i.role === 'standby' && i.ready).length === 2 &&
          list.some((i) => i.role === 'primary' && i.ready);
        return revisions().every((r: string) => r.endsWith(` ${String(status.updateRevision)}`)) && replicated
          ? status
          : undefined;
      },
      300_000,
      2000,
      explain,
    );
    const to = database().status.primary as string;
    process.stdout.write(
      `[database rollout] 3 instances on revision ${String(sts.updateRevision)} in ${((Date.now() - started) / 1000).toFixed(1)} s, the primary moved ${from} to ${to}; writes through ${db}-rw refused for ${String(outage?.toFixed(1))} s\n`,
    );
    expect(revisions().some((r: string) => before.has(r))).toBe(false);
    expect(to).not.toBe(from);
    expect(outage).toBeDefined();
    expect(outage).toBeLessThan(10);
    const acknowledged = beats.filter((b) => b.ok);
    const rows = new Set((await psql(`${db}-rw`, 'SELECT n FROM beats')).trim().split('\n').map(Number));
    expect(acknowledged.filter((b) => !rows.has(b.n)).map((b) => b.n)).toEqual([]);
    // The standbys restarted first: the former primary's pod is the newest.
    const made = getJson(['get', 'pods', '-n', ns, '-l', 'statefulset.kubernetes.io/pod-name'])
      .items.map((p: any) => [p.metadata.name as string, Date.parse(p.metadata.creationTimestamp as string)] as const)
      .sort((a: readonly [string, number], b: readonly [string, number]) => b[1] - a[1]);
    expect(made[0]?.[0]).toBe(from);
  });
});
