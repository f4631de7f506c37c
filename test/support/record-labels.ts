import type { Feature } from '../../lambda/packing/formats';
import { decodeExample, readTfRecords } from '../../lambda/packing/formats';
import type { Manifest } from '../../lambda/packing/manifest';

/** Each TFRecord record's `image/filename` → its `image/class/label` (-1 when absent), over every shard of the manifest. */
export async function recordLabels(manifest: Manifest, read: (key: string) => Promise<Buffer> | Buffer): Promise<Record<string, number>> {
  const labels: Record<string, number> = {};
  for (const shard of manifest.shards) {
    for (const record of readTfRecords(await read(shard.key))) {
      const example = decodeExample(record.payload);
      const filename = bytesOf(example['image/filename']);
      const label = example['image/class/label'];
      labels[filename] = label !== undefined && 'int64List' in label ? Number(label.int64List[0]) : -1;
    }
  }
  return labels;
}

function bytesOf(feature: Feature | undefined): string {
  if (!feature || !('bytesList' in feature)) throw new Error(`expected a bytes feature, got ${JSON.stringify(feature)}`);
  return feature.bytesList[0].toString('utf8');
}
