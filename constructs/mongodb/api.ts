import { CustomResourceKind } from '../core/kind';
import { t } from '../core/schema';

/**
 * The API groups the MongoDB Community operator has served MongoDBCommunity under: `mongodb.com`
 * up to its 0.5.x releases (seed 000 uses 0.5.0), `mongodbcommunity.mongodb.com` since.
 */
export type MongoDbCommunityGroup = 'mongodb.com' | 'mongodbcommunity.mongodb.com';

const userSchema = t.object(
  {
    name: t.string({ required: true, minLength: 1, description: 'User name.' }),
    db: t.string({ required: true, minLength: 1, description: 'Authentication database, usually admin.' }),
    passwordSecretRef: t.object(
      {
        name: t.string({
          required: true,
          minLength: 1,
          description: 'Secret holding the password. Passwords are never written in the resource itself.',
        }),
        key: t.string({ description: 'Key of the password in that Secret. Default: password.' }),
      },
      { required: true, description: "Where the user's password is." },
    ),
    roles: t.array(
      t.object({
        name: t.string({ required: true, description: 'Role name, e.g. clusterAdmin, readWriteAnyDatabase.' }),
        db: t.string({ required: true, description: 'Database the role applies to.' }),
      }),
      { required: true, minItems: 1, description: 'Roles granted to the user.' },
    ),
    scramCredentialsSecretName: t.string({
      pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
      description: 'Prefix of the Secret the operator writes SCRAM credentials to.',
    }),
  },
  { description: 'A MongoDB user the operator creates.' },
);

/**
 * A faithful subset of the MongoDB Community operator's MongoDBCommunity CRD (v1): the fields a
 * replica set definition uses. Our operators do not reconcile it; the community operator does.
 * We define it to write MongoDBCommunity resources with types (through `cdk8s import`) and to
 * validate them.
 *
 * One declaration, longer than a function should be: it is the CRD subset's schema, read top to
 * bottom as the CRD it becomes.
 */
// eslint-disable-next-line max-lines-per-function -- one schema literal: the MongoDBCommunity kind's fields as the community operator's CRD has them
export function mongoDbCommunityKind(group: MongoDbCommunityGroup): CustomResourceKind {
  return new CustomResourceKind({
    group,
    kind: 'MongoDBCommunity',
    plural: 'mongodbcommunity',
    singular: 'mongodbcommunity',
    versions: ['v1'],
    description:
      'MongoDBCommunity is a MongoDB replica set run by the MongoDB Community operator (subset of its schema).',
    spec: t.object(
      {
        members: t.integer({ required: true, minimum: 1, maximum: 50, description: 'Number of replica set members.' }),
        type: t.enum(['ReplicaSet'] as const, {
          required: true,
          description: 'Deployment type; only ReplicaSet is supported.',
        }),
        version: t.string({
          required: true,
          pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+(-.*)?$',
          description: 'MongoDB version, e.g. 4.2.6.',
        }),
        arbiters: t.integer({ minimum: 0, description: 'Number of arbiters.' }),
        security: t.object(
          {
            authentication: t.object(
              {
                modes: t.array(t.enum(['SCRAM', 'SCRAM-SHA-256', 'SCRAM-SHA-1', 'X509'] as const), {
                  required: true,
                  minItems: 1,
                  description: 'Authentication mechanisms enabled.',
                }),
              },
              { description: 'Authentication settings.' },
            ),
            tls: t.object(
              {
                enabled: t.boolean({ description: 'Serve TLS.' }),
                certificateKeySecretRef: t.object(
                  { name: t.string({ required: true }) },
                  { description: 'Secret with tls.crt and tls.key.' },
                ),
                caConfigMapRef: t.object(
                  { name: t.string({ required: true }) },
                  { description: 'ConfigMap with ca.crt.' },
                ),
              },
              { description: 'TLS settings.' },
            ),
          },
          { description: 'Security settings.' },
        ),
        users: t.array(userSchema, { description: 'Users the operator creates.' }),
        statefulSet: t.object(
          {
            spec: t.opaqueObject({
              description: "Overrides merged into the operator's StatefulSet spec (e.g. volumeClaimTemplates).",
            }),
          },
          { description: 'StatefulSet override.' },
        ),
        additionalMongodConfig: t.opaqueObject({ description: 'Extra mongod configuration.' }),
      },
      { description: 'MongoDBCommunitySpec defines the desired replica set.' },
    ),
    status: t.object(
      {
        phase: t.string({ description: 'Pending, Running or Failed.' }),
        mongoUri: t.string({ description: 'Connection string of the replica set.' }),
        currentMongoDBMembers: t.integer({ description: 'Members running.' }),
        currentStatefulSetReplicas: t.integer({ description: 'StatefulSet replicas.' }),
        message: t.string({ description: 'Details of the phase.' }),
      },
      { description: 'MongoDBCommunityStatus is written by the community operator.' },
    ),
    shortNames: ['mdbc'],
    printerColumns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    ],
  });
}
