/**
 * The webhook server the API server calls (admission and conversion), its self-managed certificate and
 * the `caBundle` of its callers, and storage migration after a storage version changes.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { admissionContextFor } from './admission-context';
export { ensureWebhookCertificate, trustAt } from './certificate';
export type { ServingCertificate } from './certificate';
export { conversionClientConfigs, webhookClientConfigs } from './client-configs';
export type { ClientConfigAt } from './client-configs';
export { selfSignedCertificate } from './self-signed';
export { WebhookServer } from './server';
export { migrateStorage } from './storage-migration';
