/**
 * The application's own PostgreSQL role: the login a Database hands out in its credentials Secret
 * owns its database and has no other right; the server's first start and a restore make it alike.
 */
import { type k8s } from 'cdk8s-plus-27';

/** An environment variable from a Secret's key. */
export const fromSecret = (name: string, secret: string, key: string): k8s.EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

/** The application role's login, password and database, from the credentials Secret's keys. */
export function applicationRoleEnv(secret: string): k8s.EnvVar[] {
  return [
    fromSecret('DATABASE_USER', secret, 'username'),
    fromSecret('DATABASE_PASSWORD', secret, 'password'),
    fromSecret('DATABASE_NAME', secret, 'database'),
  ];
}

/**
 * The application's role and database, made by the bootstrap superuser: a role that logs in with
 * the credentials Secret's password and owns its database, with none of SUPERUSER, CREATEDB,
 * CREATEROLE, REPLICATION or BYPASSRLS (a new role's defaults); nobody else may connect to that
 * database. The superuser `postgres` is left without a password: it logs in over the server's own
 * socket only (`kubectl exec … psql -U postgres`), never over the network. A Database named
 * `postgres` takes over the database of that name, which exists already.
 */
const APPLICATION_ROLE_SQL = [
  `CREATE ROLE :"user" LOGIN PASSWORD :'password';`,
  `SELECT format('CREATE DATABASE %I', :'db') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \\gexec`,
  `ALTER DATABASE :"db" OWNER TO :"user";`,
  `REVOKE ALL ON DATABASE :"db" FROM PUBLIC;`,
  'ALTER ROLE postgres PASSWORD NULL;',
].join('\n');

/**
 * A shell command running `APPLICATION_ROLE_SQL` through psql `connection` (as the superuser),
 * from the environment `applicationRoleEnv` gives. psql reads the values into its variables
 * itself (a backquoted command in `\set`) and quotes them where they are used, so no value is
 * ever part of a command line or of the SQL's text before psql quotes it.
 */
export function applicationRoleCommand(connection: string): string {
  return [
    `psql -v ON_ERROR_STOP=1 --no-psqlrc -q ${connection} <<'SQL'`,
    '\\set user `printenv DATABASE_USER`',
    '\\set password `printenv DATABASE_PASSWORD`',
    '\\set db `printenv DATABASE_NAME`',
    APPLICATION_ROLE_SQL,
    'SQL',
  ].join('\n');
}
