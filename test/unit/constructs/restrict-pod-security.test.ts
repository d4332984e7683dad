/**
 * restrictPodSecurity: a cdk8s-plus workload of any shape meets the `restricted` Pod Security
 * Standard's checks (the ones cdk8s-plus 27 cannot express: a seccomp profile and every capability
 * dropped), in every container, init containers included.
 */
import { type Chart, Cron, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { restrictPodSecurity } from '../../../constructs';

interface PodSpec {
  securityContext?: { seccompProfile?: { type: string }; runAsNonRoot?: boolean };
  containers: ContainerSpec[];
  initContainers?: ContainerSpec[];
}
interface ContainerSpec {
  name: string;
  securityContext?: { capabilities?: { drop?: string[] }; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean };
}

/** What the restricted level checks that cdk8s-plus leaves to us, container by container. */
function restrictedViolations(pod: PodSpec): string[] {
  const violations: string[] = [];
  if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') violations.push('pod: seccompProfile');
  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    if (!c.securityContext?.capabilities?.drop?.includes('ALL')) violations.push(`${c.name}: capabilities`);
    if (c.securityContext?.allowPrivilegeEscalation !== false) violations.push(`${c.name}: allowPrivilegeEscalation`);
    if (c.securityContext?.runAsNonRoot !== true) violations.push(`${c.name}: runAsNonRoot`);
  }
  return violations;
}

const containers = [
  { name: 'web', image: 'nginx', portNumber: 8080, securityContext: { user: 101 } },
  { name: 'sidecar', image: 'busybox', securityContext: { user: 101 } },
];

function podSpecOf(chart: Chart, kind: string): PodSpec {
  const object = Testing.synth(chart).find((o) => o.kind === kind);
  if (kind === 'Pod') return object.spec as PodSpec;
  if (kind === 'CronJob') return object.spec.jobTemplate.spec.template.spec as PodSpec;
  return object.spec.template.spec as PodSpec;
}

const shapes: [string, (chart: Chart) => kplus.AbstractPod][] = [
  ['Deployment', (c) => new kplus.Deployment(c, 'w', { containers })],
  ['StatefulSet', (c) => new kplus.StatefulSet(c, 'w', { containers })],
  ['Job', (c) => new kplus.Job(c, 'w', { containers })],
  ['CronJob', (c) => new kplus.CronJob(c, 'w', { containers, schedule: Cron.daily() })],
  ['Pod', (c) => new kplus.Pod(c, 'w', { containers })],
];

test.each(shapes)(
  'a %s as cdk8s-plus writes it falls short of restricted; restrictPodSecurity closes it',
  (kind, make) => {
    const plain = Testing.chart();
    make(plain);
    expect(restrictedViolations(podSpecOf(plain, kind))).toEqual(
      expect.arrayContaining(['pod: seccompProfile', 'web: capabilities', 'sidecar: capabilities']),
    );

    const restricted = Testing.chart();
    const workload = make(restricted);
    workload.addInitContainer({ name: 'setup', image: 'busybox', securityContext: { user: 101 } });
    restrictPodSecurity(workload);
    const spec = podSpecOf(restricted, kind);
    expect(restrictedViolations(spec)).toEqual([]);
    expect(spec.initContainers?.map((c) => c.name)).toEqual(['setup']);
  },
);

test('what cdk8s-plus sets stays as it is', () => {
  const chart = Testing.chart();
  const deployment = new kplus.Deployment(chart, 'w', { containers });
  restrictPodSecurity(deployment);
  const web = podSpecOf(chart, 'Deployment').containers.find((c) => c.name === 'web');
  expect(web?.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false });
  expect(web?.securityContext?.capabilities).toEqual({ drop: ['ALL'] });
});
