/**
 * `conformanceTest` over the kit's EtcdCluster: seed 000's sample, whose Ready is real etcd's.
 * For it and for each copy a check makes, three etcd members run as real processes on loopback
 * addresses of their own (EtcdMembersByName follows every cluster the run's `copy` names before
 * it is made), and the run's reconcilers reach them through the hosts file, as they inherit this
 * process's environment. In the long tier: a whole conformance run of a dozen members is about a
 * CPU-minute, past what `npm test`'s budget has room for (conformance.test.ts runs the other kinds).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { KubeObject } from '../../constructs/contract';
import { ETCD_HOSTS_FILE_ENV } from '../../constructs/etcd/member-hosts';
import { type ConformanceReport, type ControlPlane, conformanceTest, startControlPlane } from '../../testing';
import { etcdReleases } from '../support/etcd-members';
import { EtcdMembersByName } from '../support/etcd-members-by-name';
import { nodesRun, testIf } from '../support/kube';

jest.setTimeout(600_000);

const SEED = path.join(__dirname, '..', 'fixtures', 'seeds', '000-my-etcd-cluster.yaml');
const KIT_KINDS = path.join(__dirname, '..', 'fixtures', 'conformance', 'kit-kinds.ts');
const canRun = nodesRun && !!etcdReleases()['3.5.21'];

let plane: ControlPlane | undefined;
let members: EtcdMembersByName | undefined;
let report: Promise<ConformanceReport> | undefined;

beforeAll(async () => {
  if (!canRun) return;
  plane = await startControlPlane({ audit: true, own: true, verbose: false });
  const hostsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-hosts-')), 'hosts.json');
  fs.writeFileSync(hostsFile, '{}');
  process.env[ETCD_HOSTS_FILE_ENV] = hostsFile;
  const example = parse(fs.readFileSync(SEED, 'utf8')) as KubeObject;
  const namespace = `conformance-etcd-${Math.random().toString(36).slice(2, 8)}`;
  // Subnets 100–209: etcd-membership's clusters take 10–99 in the same tier.
  const followed = (members = new EtcdMembersByName(
    namespace,
    hostsFile,
    100 + Math.floor(Math.random() * 100),
    plane.kubeconfig,
  ));
  followed.follow(example.metadata.name!);
  report = conformanceTest({
    controlPlane: plane,
    controllers: KIT_KINDS,
    kind: 'EtcdCluster',
    examples: [example],
    namespace,
    copy: (original, name) => {
      followed.follow(name);
      return { ...original, metadata: { ...original.metadata, name } };
    },
  });
  // A failed run is the test's to report.
  report.catch(() => undefined);
});

afterAll(async () => {
  await report?.catch(() => undefined);
  await members?.stop();
  await plane?.stop();
});

testIf(canRun, 'needs simulated nodes and the etcd 3.5.21 binary')(
  "the kit's EtcdCluster, the seed's sample (three real etcd members for it and for each check's copy), passes every check",
  async () => {
    expect(await report!).toMatchObject({ problems: [], notChecked: [] });
    // Its Ready was real etcd's: three members ran for the example and for each copy that had to
    // become Ready (watch-cut, apiserver-restart, quantities); the never-adopts copy's may not.
    const ran = await members!.podsThatRan();
    const threeRan = Object.keys(ran).filter((cluster) => ran[cluster]!.length === 3);
    expect(threeRan).toContain('my-etcd-cluster');
    expect(threeRan.length).toBeGreaterThanOrEqual(4);
  },
);
