export default async function teardown(): Promise<void> {
  await (globalThis as { controlPlane?: { stop(): Promise<void> } }).controlPlane?.stop();
}
