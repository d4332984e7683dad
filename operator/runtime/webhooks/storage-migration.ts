/**
 * Storage migration: after a kind's storage version changes, objects written before stay in
 * etcd in the old version until something writes them again, and the old version cannot be
 * dropped from the CRD while `status.storedVersions` lists it. This rewrites each object once
 * (a no-op patch: the API server stores it anew in the storage version) and then trims
 * `storedVersions` to the storage version — what kube-storage-version-migrator does, for the
 * operator's own kinds only.
 */
import type { Logger } from 'pino';
import { BuiltinTypes, customResourceType } from '../../../constructs/contract';
import type { KindDescriptor } from '../../../constructs/contract/kind';
import { isNotFound, type KubeClient } from '../client';

/** What one migration did. */
export interface MigrationResult {
  /** The versions the CRD listed as stored before. */
  readonly storedVersions: readonly string[];
  /** Objects rewritten; 0 when there was nothing to migrate. */
  readonly rewritten: number;
}

const PAGE_SIZE = '500';

/**
 * Rewrites every object of the kind in its storage version when the CRD says some were stored
 * in another, then records that only the storage version is stored. Idempotent: with nothing
 * to migrate it reads the CRD and returns.
 */
export async function migrateStorage(
  client: KubeClient,
  kind: KindDescriptor,
  logger: Logger,
  signal?: AbortSignal,
): Promise<MigrationResult> {
  const crd = await client.get(BuiltinTypes.CustomResourceDefinition, kind.crdName);
  const storedVersions = crd.status?.storedVersions ?? [];
  if (storedVersions.every((v) => v === kind.storageVersion)) return { storedVersions, rewritten: 0 };
  logger.info(
    { crd: kind.crdName, storedVersions, storageVersion: kind.storageVersion },
    'rewriting every object in the storage version',
  );
  const type = customResourceType(kind);
  let rewritten = 0;
  let continueToken: string | undefined;
  do {
    const page = await client.list(type, undefined, {
      limit: PAGE_SIZE,
      ...(continueToken ? { continue: continueToken } : {}),
    });
    for (const object of page.items) {
      if (signal?.aborted) throw new Error('storage migration stopped: shutting down');
      try {
        // An empty patch still stores the object again, encoded in the storage version.
        await client.mergePatch(type, object.metadata.name, object.metadata.namespace, {});
        rewritten++;
      } catch (err) {
        // Deleted meanwhile: nothing left to migrate.
        if (!isNotFound(err)) throw err;
      }
    }
    continueToken = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (continueToken);
  // Every object written before the list was rewritten, and every one written since is stored
  // in the storage version already.
  await client.mergePatch(
    BuiltinTypes.CustomResourceDefinition,
    kind.crdName,
    undefined,
    { status: { storedVersions: [kind.storageVersion] } },
    { subresource: 'status' },
  );
  logger.info({ crd: kind.crdName, rewritten, storedVersions: [kind.storageVersion] }, 'storage migration done');
  return { storedVersions, rewritten };
}
