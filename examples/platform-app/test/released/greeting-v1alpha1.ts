/**
 * The Greeting operator as this app released it first: v1alpha1 alone (`text`, one server).
 * Kept frozen here so that every later version is tested as an upgrade from it (upgrade.test.ts).
 */
import { constructController, constructStatusSchema, CustomResourceKind } from 'cdk8s-operator-kit';
import { GreetingServer, greetingKind, greetingV1alpha1Spec } from '../../greeting';

export const greetingV1alpha1Kind = new CustomResourceKind({
  group: greetingKind.group,
  kind: greetingKind.kind,
  versions: ['v1alpha1'],
  description: 'Greeting serves a message over HTTP.',
  spec: greetingV1alpha1Spec,
  status: constructStatusSchema(),
  dns1035Name: true,
});

export const controllers = [
  constructController({
    kind: greetingV1alpha1Kind,
    render: (scope, greeting, { owner }) =>
      new GreetingServer(scope, 'greeting', {
        greeting: { metadata: greeting.metadata, spec: { message: greeting.spec.text, replicas: 1 } },
        owner,
      }),
    examples: [{ text: 'hello' }],
  }),
];
