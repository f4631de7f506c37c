import type { RecordContent } from '../../../lib/contract/record-vocabulary';

// What the records hold and its default are the contract's (the construct renders the same default);
// `images` files are checked at pack time (image-check.ts).
export type { RecordContent } from '../../../lib/contract/record-vocabulary';
export { defaultRecordContent } from '../../../lib/contract/record-vocabulary';

/** Whether files are checked as images: always with preprocessing (the preprocessor decodes them), else as `content` says. */
export function checksImages(content: RecordContent, preprocessed: boolean): boolean {
  return preprocessed || content === 'images';
}
