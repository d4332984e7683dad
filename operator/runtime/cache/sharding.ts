/**
 * Sharding by namespace: the 64-bit FNV-1a hash space of `metadata.namespace`, cut into equal
 * ranges, one per shard. A resource and its children share a namespace, so they always fall in
 * one shard. The hash and the range syntax are the API server's own (KEP-5866, feature gate
 * ShardedListAndWatch): with the gate on, a list or watch carrying `shardSelector` returns only
 * its range; without it the parameter is ignored and the informer filters the same range itself.
 */

/** 2^64: the exclusive end of the hash space. */
export const HASH_SPACE_END = 1n << 64n;

/** A range of the hash space: `start` included, `end` excluded. */
export interface HashRange {
  readonly start: bigint;
  readonly end: bigint;
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const U64 = HASH_SPACE_END - 1n;

/** 64-bit FNV-1a of the string's UTF-8 bytes, as the API server hashes for `shardRange()`. */
export function fnv1a64(text: string): bigint {
  let hash = FNV64_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * FNV64_PRIME) & U64;
  }
  return hash;
}

/** Shard `index` of `count`: equal ranges, together the whole space with no gap or overlap. */
export function shardRange(index: number, count: number): HashRange {
  if (!Number.isInteger(count) || count < 1) throw new Error(`shard count must be a whole number ≥ 1, got ${count}`);
  if (!Number.isInteger(index) || index < 0 || index >= count)
    throw new Error(`shard index must be in 0..${count - 1}, got ${index}`);
  const n = BigInt(count);
  return { start: (BigInt(index) * HASH_SPACE_END) / n, end: (BigInt(index + 1) * HASH_SPACE_END) / n };
}

/** Hashes of the namespaces seen: few, and asked for on every event. */
const namespaceHashes = new Map<string, bigint>();

/** Whether objects of this namespace ('' for cluster-scoped ones) fall in the range. */
export function namespaceInRange(namespace: string, range: HashRange): boolean {
  let hash = namespaceHashes.get(namespace);
  if (hash === undefined) {
    if (namespaceHashes.size >= 100_000) namespaceHashes.clear();
    namespaceHashes.set(namespace, (hash = fnv1a64(namespace)));
  }
  return hash >= range.start && hash < range.end;
}

export function rangesOverlap(a: HashRange, b: HashRange): boolean {
  return a.start < b.end && b.start < a.end;
}

/**
 * The `shardSelector` of a range over the namespace hash. The server wants bounds of 16 hex
 * digits after `0x` (the end of the space, 2^64, is the one 17-digit bound).
 */
export function shardSelector(range: HashRange): string {
  return `shardRange(object.metadata.namespace, '${hex(range.start)}', '${hex(range.end)}')`;
}

function hex(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}

/** How an informer of a sharded replica gets its range. */
export interface ShardScope {
  readonly range: HashRange;
  /**
   * Whether the API server applies shard selectors, as a probe found (a list of a built-in kind
   * carrying `metadata.shardInfo`). v1.36 filters custom resources too but leaves `shardInfo` out
   * of their lists, so for a list without it this is what the informer goes by. @default false
   */
  readonly serverFilters?: boolean;
  /**
   * Told whether the API server applies the selector ('server') or ignores it ('client': the
   * informer drops what is out of the range itself); again if an object out of the range arrives.
   */
  readonly onServedBy?: (resource: string, by: 'server' | 'client') => void;
}
