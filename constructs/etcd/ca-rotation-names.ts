/**
 * The names of a CA rotation (certificates.ts writes them, ca-rotation.ts reads them): pure, for
 * the render and the runtime alike.
 */

/** The annotation by which a user asks for new CAs now (any new value, e.g. a date): a key feared leaked. */
export const ROTATE_CA_ANNOTATION = 'etcd.database.coreos.com/rotate-ca';

/** On the CA Secret: the phase of a rotation under way, `trust` or `drop` (absent: none). */
export const CA_ROTATION_ANNOTATION = 'etcd.database.coreos.com/ca-rotation';

/**
 * On the CA Secret: when the certificates' Secrets began to say the phase's trust (RFC 3339, ms).
 * A member pod made before it still trusts what it started with, and is restarted.
 */
export const CA_ROTATION_SINCE_ANNOTATION = 'etcd.database.coreos.com/ca-rotation-since';

/** On the CA Secret: the value of the user's annotation a rotation was made for (so it is made once). */
export const CA_ROTATED_FOR_ANNOTATION = 'etcd.database.coreos.com/ca-rotated-for';

/** A phase of a rotation: members made to trust the new CAs beside the old, then the old dropped. */
export type CaRotationPhase = 'trust' | 'drop';
