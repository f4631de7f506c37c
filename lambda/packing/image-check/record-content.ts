import type { LabelMode } from '../planning/plan-types';

/**
 * What the records hold: `images`, each file checked at pack time (image-check.ts) so that none the
 * training readers cannot decode becomes a record, or `any` bytes, packed as they are.
 */
export type RecordContent = 'images' | 'any';

/** The default: images with folder labels (a class per folder: an image classification set), any bytes without labels. */
export function defaultRecordContent(labels: LabelMode | undefined): RecordContent {
  return (labels ?? 'folder') === 'folder' ? 'images' : 'any';
}

/** Whether files are checked as images: always with preprocessing (the preprocessor decodes them), else as `content` says. */
export function checksImages(content: RecordContent, preprocessed: boolean): boolean {
  return preprocessed || content === 'images';
}
