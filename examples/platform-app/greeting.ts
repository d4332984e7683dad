/** This app's own kind: a Greeting is a message served by a small web server. */
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  constructController,
  constructStatusSchema,
  CustomResource,
  CustomResourceKind,
  OwnerReferenceLike,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  spokeVersion,
  t,
} from 'cdk8s-operator-kit';

export const greetingSpec = t.object(
  {
    message: t.string({ required: true, minLength: 1, description: 'What to say.' }),
    replicas: t.integer({ default: 1, minimum: 1, maximum: 5, description: 'Servers.' }),
  },
  { description: 'GreetingSpec: what to say, and how many servers say it.' },
);

/** The first release's spec: one server saying `text`. v1 renamed it and added replicas. */
export const greetingV1alpha1Spec = t.object(
  { text: t.string({ required: true, minLength: 1, description: 'What to say.' }) },
  { description: 'GreetingSpec (v1alpha1): what its one server says.' },
);

export type Greeting = CustomResource<typeof greetingSpec, ReturnType<typeof constructStatusSchema>>;

export const greetingKind = new CustomResourceKind({
  group: 'platform.example.com',
  kind: 'Greeting',
  // v1, the last, is the storage version; v1alpha1 objects are converted by the operator.
  versions: ['v1alpha1', 'v1'],
  description: 'Greeting serves a message over HTTP.',
  spec: greetingSpec,
  status: constructStatusSchema(),
  dns1035Name: true,
  conversions: {
    v1alpha1: spokeVersion<typeof greetingV1alpha1Spec, Greeting['spec']>({
      spec: greetingV1alpha1Spec,
      toHub: ({ text }) => ({ message: text, replicas: 1 }),
      // replicas has no place in v1alpha1: the kit keeps it in an annotation of the v1alpha1 view.
      fromHub: ({ message }) => ({ text: message }),
      examples: [{ text: 'hello' }],
    }),
  },
});

export class GreetingServer extends Construct {
  constructor(
    scope: Construct,
    id: string,
    props: { greeting: Pick<Greeting, 'metadata' | 'spec'>; owner?: OwnerReferenceLike },
  ) {
    super(scope, id);
    const {
      metadata: { name, namespace },
      spec,
    } = props.greeting;
    const labels = { 'app.kubernetes.io/name': 'greeting', 'app.kubernetes.io/instance': name };
    const meta = { name, namespace, labels, ownerReferences: props.owner ? [props.owner] : undefined };
    new k8s.KubeConfigMap(this, 'Message', { metadata: meta, data: { 'index.html': spec.message } });
    new k8s.KubeDeployment(this, 'Server', {
      metadata: meta,
      spec: {
        replicas: spec.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: restrictedPodSecurityContext(101),
            containers: [
              {
                name: 'web',
                image: 'nginxinc/nginx-unprivileged:1.27-alpine',
                securityContext: restrictedContainerSecurityContext(),
                volumeMounts: [
                  { name: 'message', mountPath: '/usr/share/nginx/html' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'message', configMap: { name } },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    });
  }
}

export const greetingController = constructController<Greeting>({
  kind: greetingKind,
  render: (scope, greeting, { owner }) => new GreetingServer(scope, 'greeting', { greeting, owner }),
  examples: [{ message: 'hello', replicas: 1 }],
});
